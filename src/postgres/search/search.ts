/**
 * Message search. The tsquery is a literal built from the parsed query (sql/engines/postgres/fts.ts); a session scope is one more ANDed
 * lexeme, so the GIN index does the scoping (no join filter). Ranked recall is candidates.ts; the all-words search
 * here computes relevance (`ts_rank`) only for the newest SEARCH_CANDIDATES matches, never for every match in the
 * store. The active-path flag is computed for the returned hits only, with O(log depth) skip-pointer climbs from
 * each session's latest leaf.
 */

import type { SearchItem, StoreSearchOptions, WithFactHits } from "../../contract/search.js";
import { storedMessageText } from "../../message/text.js";
import { ActivePaths, growingWindow, keepWindowToActivePaths } from "../../search/active-paths.js";
import { withFactHits } from "../../search/fact-fusion.js";
import { hitResult, rankedHits } from "../../search/hits.js";
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from "../../search/limits.js";
import { outsideSessions, type SearchPlan, searchPlan } from "../../search/options.js";
import { parseQuery } from "../../search/query.js";
import type { VectorChannel } from "../../search/vectors/types.js";
import type { Executor } from "../../sql/engines/postgres/client.js";
import { sessionLexeme, toTsquery, withinOwner } from "../../sql/engines/postgres/fts.js";
import type { Tables } from "../../sql/engines/postgres/tables.js";
import { activePathsCte, ancestorCte, isoSql } from "../../sql/engines/postgres/tree.js";
import { searchBlinds } from "../../sql/search/postgres-blind.js";
import { withExtras } from "../../sql/search/postgres-extras.js";
import { filterParams } from "../../sql/search/postgres-filters.js";
import { candidateOf, openHitContents, type PageHit } from "../../sql/search/postgres-page.js";
import { SEARCH_CANDIDATES } from "../../store/limits.js";
import { type FactChannel, recallSearch } from "./candidates.js";
import { fanOutAllWords } from "./fan-out.js";

// Which hits need a climb to know whether they lie on their session's active path: not those of a session without
// other branches (all of its messages do), nor those deeper than their leaf (none can), nor those of a session $9
// keeps to its path (the read let only its path's through). A climb's steps are hash joins over the table when the
// hits are estimated at thousands (a climb per hit of a long abandoned branch cost a search ~0.4 s at 100,000
// messages).
const NEEDS_CLIMB = `leaf_seq IS NOT NULL AND message_count <> leaf_depth + 1 AND depth <= leaf_depth
  AND session_num <> ALL(COALESCE($9::bigint[], '{}'))`;

// $1 tsquery, $2 session id or NULL, $3 how many ranked hits to return, $4 whether only active-path hits count,
// $5 roles, $6 since, $7 until, $8 session ids, $9 sessions (numbers) whose matches must lie on their active path
// (each NULL: no filter; each path is walked once, depth rows).
// In the Citus layout this statement runs for one session (across sessions: fan-out.ts): every table reference names $2.
function searchSql(t: Tables): string {
  const own = t.layout.scope("$2::text");
  return `WITH RECURSIVE
  ${activePathsCte(t.messages, t.heads, "$9::bigint[]", own)},
  cand AS (
    SELECT seq, search FROM ${t.messages} WHERE search @@ $1::tsquery${own(null)}
      AND ($5::text[] IS NULL OR role = ANY($5::text[]))
      AND ($6::timestamptz IS NULL OR created_at >= $6::timestamptz)
      AND ($7::timestamptz IS NULL OR created_at < $7::timestamptz)
      AND ($8::text[] IS NULL OR session_num IN (SELECT num FROM ${t.heads} WHERE session_id = ANY($8::text[])))
      AND ($9::bigint[] IS NULL OR session_num <> ALL($9::bigint[]) OR seq IN (SELECT seq FROM path))
    ORDER BY seq DESC LIMIT ${SEARCH_CANDIDATES}
  ),
  ranked AS (SELECT seq, ts_rank(search, $1::tsquery) AS rank FROM cand ORDER BY rank DESC, seq DESC LIMIT $3),
  hits AS (
    SELECT r.seq, r.rank, m.id, m.role, m.content, m.depth, ${isoSql("m.created_at")} AS created_at,
      h.session_id, h.leaf_seq, h.num AS session_num, h.message_count, h.leaf_depth
    FROM ranked r JOIN ${t.messages} m ON m.seq = r.seq${own("m")} JOIN ${t.heads} h ON h.num = m.session_num${own("h")}
    WHERE $2::text IS NULL OR h.session_id = $2::text
  ),
  ${ancestorCte(t.messages, "anc", `SELECT seq, depth, leaf_seq FROM hits WHERE ${NEEDS_CLIMB}`, false, own)},
  found AS (SELECT k FROM anc WHERE depth = target AND seq = k),
  flagged AS (SELECT hits.*, leaf_seq IS NOT NULL AND (NOT (${NEEDS_CLIMB}) OR seq IN (SELECT k FROM found))
    AND depth <= leaf_depth AS on_path FROM hits)
  SELECT seq::float8 AS seq, rank::float8 AS rank, id, role, CASE WHEN on_path OR NOT $4::boolean THEN content END AS content, created_at,
    session_id, on_path, depth, session_num::float8 AS session_num, leaf_seq::float8 AS leaf_seq, message_count,
    leaf_depth, (SELECT count(*) FROM cand) >= ${SEARCH_CANDIDATES} AS cand_full
  FROM flagged ORDER BY rank DESC, seq DESC`;
}

interface HitRow {
  seq: number;
  /** ts_rank of the match. */
  rank: number;
  id: string;
  role: string;
  content: string | null;
  created_at: string;
  session_id: string;
  on_path: boolean;
  depth: number;
  session_num: number;
  leaf_seq: number | null;
  message_count: number;
  leaf_depth: number;
  /** The newest SEARCH_CANDIDATES matches filled the candidates: older ones were left out. */
  cand_full: boolean;
}

/**
 * Message search across sessions (or within the ones the options name): ranked recall (candidates.ts) by default, or
 * every word required (`match: "all"`), with the filters, overlay marks and context the options ask for.
 */
export async function searchMessages(
  executor: Executor,
  t: Tables,
  query: string,
  options: StoreSearchOptions | WithFactHits<StoreSearchOptions> = {},
  limits: QueryLimits = DEFAULT_QUERY_LIMITS,
  vectors?: VectorChannel,
  factChannel?: FactChannel,
): Promise<SearchItem[]> {
  // An owner is one more lexeme ANDed inside the index (sql/engines/postgres/fts.ts), as a session is, and a condition of the vector read.
  const plan = searchPlan(options);
  if (typeof query !== "string") return [];
  if (plan.match === "all")
    return rankedHits(await withExtras(executor, t, await allWords(executor, t, query, plan, limits), plan));
  const { hits, facts } = await recallSearch(executor, t, query, plan, limits, vectors, factChannel);
  const ranked = rankedHits(await withExtras(executor, t, hits, plan));
  return plan.facts === "hits" && facts !== undefined ? withFactHits(ranked, facts, plan.limit) : ranked;
}

/**
 * Every word required: the newest SEARCH_CANDIDATES matches ranked, read a window at a time (growingWindow); an
 * active-branch search keeps the sessions that crowded a window to their active paths (keepWindowToActivePaths).
 */
async function allWords(
  executor: Executor,
  t: Tables,
  query: string,
  plan: SearchPlan,
  limits: QueryLimits,
): Promise<PageHit[]> {
  const { limit, activeOnly, sessionId } = plan;
  // Parsed (and so bounded) before anything else: a query over the limits is refused even with limit 0.
  const terms = parseQuery(query, limits);
  if (limit === 0 || outsideSessions(plan)) return [];
  // Owners in scope with a key: their sealed messages are matched by blind tokens (blind.ts).
  const blinds = await searchBlinds(executor.query, t, plan);
  const tsquery = withinOwner(
    toTsquery(terms, sessionId === undefined ? undefined : sessionLexeme(sessionId), blinds),
    plan.owner,
  );
  if (tsquery === null) return [];
  const filter = filterParams(plan);
  if (filter === null) return [];
  // In the Citus layout a search across sessions fans out (fan-out.ts): this statement's walks need one shard.
  if (t.layout.readsPerShard && sessionId === undefined)
    return fanOutAllWords(executor, t, tsquery, plan, filter);
  const filters = [filter.roles, filter.since, filter.until, filter.sessionIds];
  const read = async (window: number, paths: readonly number[]) => {
    const params = [
      tsquery,
      sessionId ?? null,
      window,
      activeOnly,
      ...filters,
      paths.length === 0 ? null : paths,
    ];
    const rows = await executor.query<HitRow>(searchSql(t), params);
    const hits = activeOnly ? rows.filter((r) => r.on_path) : rows;
    return { rows, hits, found: hits.length, held: rows.length, full: rows[0]?.cand_full === true };
  };
  // Sessions kept to their active paths inside the read, across the windows (their rounds bounded in all).
  const paths = new ActivePaths();
  // Sessions whose newest matches lie mostly on other branches (a long exploration the conversation came back
  // from): the window held too few on the active paths and older matches were left out, so rank the paths' own
  // matches instead, with each session that crowded the window kept to its path (search/active-paths.ts). Before
  // the window grows: each growth scans the matches again, and the paths' matches are what it would look for
  // (behind a 100,000-message abandoned branch: two scans of its matches, not four).
  const { hits } = await growingWindow(plan, SEARCH_CANDIDATES, async (window) =>
    keepWindowToActivePaths(
      plan,
      await read(window, paths.kept),
      {
        crowding: (answer) =>
          answer.rows
            .filter((r) => !r.on_path)
            .map((r) => ({ num: Number(r.session_num), depth: Number(r.leaf_depth) })),
        reread: (kept) => read(window, kept),
      },
      paths,
    ),
  );
  const page = hits.slice(0, limit);
  // An encrypted owner's hits (found by its blind tokens) are opened: only those returned.
  await openHitContents(executor, t, page, (row) => row.session_id);
  return page.map((row) => ({
    candidate: candidateOf(row),
    result: hitResult(
      {
        id: row.id,
        role: row.role,
        content: row.content === null ? "" : storedMessageText(row.content),
        createdAt: row.created_at,
        sessionId: row.session_id,
        onActivePath: row.on_path,
      },
      Number(row.rank),
    ),
  }));
}
