/**
 * Each ranked-recall candidate's parent as the ranking links it (search/rank.ts, TEXTLESS_RUN): messages without
 * searchable text (`search IS NULL`: an agent's tool calls and results, an emoji) are no turns, so a candidate whose
 * parent has none is linked to its nearest ancestor that has, through at most TEXTLESS_RUN of them; past that, or
 * at a root, to none.
 *
 * Part of the candidate statement (candidates.ts): no round trip of its own. The parents that are no candidates are read
 * in one index scan (`seq = ANY(…)`), which keeps those without text; only from these does a walk go up, a row per
 * step read by its primary key, once per such parent however many candidates reply to it. A session without such
 * messages (a store without, for a search across sessions) is told by one probe of an index of them, and reads none. The planner sees the parents as an array of unknown length, so its
 * estimate stays small for 4,000 candidates as for 40: a walk anchored on the candidates' rows was estimated at
 * ~300,000 for 4,000 of them, and the server JIT-compiled the statement (+30 ms).
 */
import { TEXTLESS_RUN } from "../../search/rank.js";
import type { Scope } from "../engines/postgres/tree.js";

/**
 * CTEs over `cand(seq, parent_seq)`: `text_walk`, and `text_parent(p, seq)`: for each parent p without searchable
 * text, the ancestor its children link to (NULL: none). `candidatesHaveText`: every row of `cand` matches a term, so
 * a parent in `cand` has text and is not read. `oneSession`: `$4` is the session searched (or NULL: any); else the
 * walk reads the sessions `scope` names (several of one shard, fan-out.ts) and `$4` is theirs.
 */
export function textParentsCte(
  messages: string,
  heads: string,
  candidatesHaveText: boolean,
  scope: Scope = () => "",
  oneSession = true,
): string {
  const parents = candidatesHaveText
    ? "SELECT parent_seq FROM cand WHERE parent_seq NOT IN (SELECT seq FROM cand)"
    : "SELECT parent_seq FROM cand";
  // One probe of the index of messages without text (schema version 11): the session searched ($4), or any
  // session, holds one. Uncorrelated, so the server checks it once and, when false, reads no parent at all. Each
  // parent is read by its key (the lateral read): offered the index of messages without text, the planner scanned
  // all of them and kept the parents among them.
  const session = oneSession
    ? `AND ($4::text IS NULL OR x.session_num = (SELECT num FROM ${heads} WHERE session_id = $4::text))`
    : "";
  const gate = `EXISTS (SELECT 1 FROM ${messages} x WHERE x.search IS NULL${scope("x")}
    ${session})`;
  // Row n of a walk is the nth row up from p; it goes on from a row without text while n <= TEXTLESS_RUN, so the
  // row it ends on has text (the link), or is the root or the run's last row without (no link).
  return `text_walk(p, seq, parent_seq, textless, n) AS (
    SELECT q.seq, q.seq, q.parent_seq, true, 1 FROM unnest(ARRAY(${parents})) p(seq)
      CROSS JOIN LATERAL (SELECT seq, parent_seq FROM ${messages} WHERE seq = p.seq AND search IS NULL${scope(null)}
        OFFSET 0) q
      WHERE ${gate}
    UNION ALL
    SELECT w.p, q.seq, q.parent_seq, q.search IS NULL, w.n + 1 FROM text_walk w
      CROSS JOIN LATERAL (SELECT seq, parent_seq, search FROM ${messages} WHERE seq = w.parent_seq${scope(null)}
        OFFSET 0) q
    WHERE w.textless AND w.n <= ${TEXTLESS_RUN}
  ),
  text_parent(p, seq) AS (SELECT p, max(seq) FILTER (WHERE NOT textless) FROM text_walk GROUP BY p)`;
}

/** Joins `tp`, the row of {@link textParentsCte} for the candidate's parent (none: the parent is linked as it is). */
export const TEXT_PARENT_JOIN = "LEFT JOIN text_parent tp ON tp.p = m.parent_seq";

/** The candidate's parent for the ranking, given `m` (its row) and {@link TEXT_PARENT_JOIN}. */
export const TEXT_PARENT_SEQ = "CASE WHEN tp.p IS NULL THEN m.parent_seq ELSE tp.seq END";
