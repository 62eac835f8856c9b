/**
 * What a Postgres search adds to its hits, the twin of src/sql/search/sqlite-extras.ts: the compaction overlay that
 * covers a hit (its summary stands for the hit in the history; the original is kept) and, on request, the turns
 * around it along its branch.
 */

import type { SearchResult } from "../../contract/search.js";
import { storedMessageText } from "../../message/text.js";
import { type ContextRow, SEARCH_CONTEXT_BYTES, setContexts } from "../../search/context.js";
import type { SearchPlan } from "../../search/options.js";
import {
  type CoverCheck,
  FIRST_OVERLAYS,
  markOverlaysAsync,
  type OverlayEnd,
} from "../../search/overlay-marks.js";
import { isSealed } from "../../store/crypto/seal.js";
import type { Executor } from "../engines/postgres/client.js";
import type { Tables } from "../engines/postgres/tables.js";
import { ancestorCte, isoSql, stepTo } from "../engines/postgres/tree.js";
import { openContent } from "../sealing/postgres-stored-form.js";
import type { PageHit } from "./postgres-page.js";

/** The results of `hits`, each with its overlay mark and, when the plan asks, its context. */
export async function withExtras(
  executor: Executor,
  t: Tables,
  hits: readonly PageHit[],
  plan: SearchPlan,
): Promise<SearchResult[]> {
  if (hits.length === 0) return [];
  // In the Citus layout each statement names one session (its shard): the hits go by session, in the order of
  // their first hit, the context budget carried from one to the next (bounded by the page's hits).
  const groups = new Map<string, PageHit[]>();
  for (const hit of t.layout.readsPerShard ? hits : []) {
    const id = hit.candidate.sessionId;
    groups.set(id, [...(groups.get(id) ?? []), hit]);
  }
  let budget = SEARCH_CONTEXT_BYTES;
  for (const group of t.layout.readsPerShard ? groups.values() : [hits]) {
    await markOverlays(executor, t, group);
    if (plan.context > 0) budget -= await addContext(executor, t, group, plan.context, budget);
  }
  return hits.map((hit) => hit.result);
}

/**
 * The overlay marks of `hits` (search/overlay-marks.ts) over this source: the overlays of several sessions in one
 * statement, and the climbs of every (hit, overlay) pair in one more. In the Citus layout the hits are of one
 * session (withExtras): its statements name it (the last parameter).
 */
function markOverlays(executor: Executor, t: Tables, hits: readonly PageHit[]): Promise<void> {
  const first = hits[0]?.candidate.sessionId;
  const own = first !== undefined ? t.layout.routeParams(first) : [];
  return markOverlaysAsync(
    {
      // A round trip costs more than the rows it saves: the newest few first, older ones only where needed (a
      // search of 20 hits among 250 nested overlays spent about half its time reading every overlay's endpoints).
      firstRead: FIRST_OVERLAYS,
      overlays: async (sessions, limit) =>
        (
          await executor.query<OverlayRow>(
            overlaysSql(t),
            [[...sessions.keys()], [...sessions.values()], limit, ...own],
            true,
          )
        ).map(({ id, seq, sessionNum, fromSeq, fromDepth, toSeq, toDepth }) => ({
          id,
          seq,
          session: sessionNum,
          from: fromSeq === null || fromDepth === null ? null : { seq: fromSeq, depth: fromDepth },
          to: toSeq === null || toDepth === null ? null : { seq: toSeq, depth: toDepth },
        })),
      firstCovering: (checks) => firstCovering(executor, t, checks, own),
    },
    hits.map(({ candidate, overlaid, result }) => ({
      seq: candidate.seq,
      depth: candidate.depth,
      session: candidate.sessionNum,
      overlaid,
      result,
    })),
  );
}

/** An overlay as overlaysSql reads it, its endpoints null when a message it names is gone. */
interface OverlayRow {
  id: string;
  seq: number;
  sessionNum: number;
  fromSeq: number | null;
  fromDepth: number | null;
  toSeq: number | null;
  toDepth: number | null;
}

/**
 * The overlays of sessions `$1` with their endpoints, newest first: per session the newest `$3` older than the
 * seq `$2` names for it (null: the newest). An overlay whose endpoint is gone comes with null depths (it covers
 * nothing), so the rows still count a session's overlays.
 */
const overlaysSql = (t: Tables) => {
  const own = t.layout.scope("$4::text");
  return `SELECT o.id, o.seq::float8 AS seq, o.session_num::float8 AS "sessionNum", f.seq::float8 AS "fromSeq",
     f.depth AS "fromDepth", e.seq::float8 AS "toSeq", e.depth AS "toDepth"
   FROM unnest($1::bigint[], $2::bigint[]) s(num, before)
   CROSS JOIN LATERAL (
     SELECT seq, id, session_num, from_message_id, to_message_id FROM ${t.compactions} c
     WHERE c.session_num = s.num AND (s.before IS NULL OR c.seq < s.before)${own("c")}
     ORDER BY c.seq DESC LIMIT $3::integer
   ) o
   LEFT JOIN ${t.messages} f ON f.session_num = o.session_num AND f.id = o.from_message_id${own("f")}
   LEFT JOIN ${t.messages} e ON e.session_num = o.session_num AND e.id = o.to_message_id${own("e")}
   ORDER BY o.seq DESC`;
};

/**
 * For each check, the first of its overlays that covers its hit, every pair checked in one statement by two
 * climbs: the hit's ancestor at the overlay's first message's depth must be that message, and the overlay's last
 * message's ancestor at the hit's depth the hit. Equal climbs are made once.
 */
async function firstCovering(
  executor: Executor,
  t: Tables,
  checks: readonly CoverCheck<OverlayEnd>[],
  own: readonly string[],
): Promise<(number | undefined)[]> {
  const anchors: [target: number, start: number][] = [];
  const anchorOf = new Map<string, number>();
  const climb = (target: number, start: number) => {
    const key = `${start}/${target}`;
    let k = anchorOf.get(key);
    if (k === undefined) {
      k = anchors.push([target, start]) - 1;
      anchorOf.set(key, k);
    }
    return k;
  };
  // Every hit and end here has its depth (markOverlays gives them).
  const pairs = checks.map(({ hit, overlays }) =>
    overlays.map(({ from, to }) => ({ up: climb(from.depth!, hit.seq), down: climb(hit.depth!, to.seq) })),
  );
  const rows = await executor.query<{ k: number; seq: number }>(
    `WITH RECURSIVE ${ancestorCte(
      t.messages,
      "anc",
      "SELECT * FROM unnest($1::bigint[], $2::integer[], $3::bigint[])",
      false,
      t.layout.scope("$4::text"),
    )}
     SELECT k::float8 AS k, seq::float8 AS seq FROM anc WHERE depth = target`,
    [anchors.map((_, k) => k), anchors.map((a) => a[0]), anchors.map((a) => a[1]), ...own],
  );
  const found = new Map(rows.map((row) => [Number(row.k), Number(row.seq)]));
  return checks.map(({ hit, overlays }, i) => {
    const k = pairs[i]!.findIndex(
      ({ up, down }, j) => found.get(up) === overlays[j]!.from.seq && found.get(down) === hit.seq,
    );
    return k < 0 ? undefined : k;
  });
}

/**
 * The turns around every hit in one statement (a statement per hit and side was two round trips per hit): `$1`
 * hit numbers, `$2` their seqs, `$3` depths, `$4` the leaf whose path gives the turns after (the hit is on the
 * active path) or null (the newest replies), `$5` turns per side, `$6` the budget of bytes. Rows: hit number, side
 * (0 before, 1 after), an order within the side, oldest first, and the turn's seq. A message bordering several hits
 * is read once: only its first row carries its content, and only while the first rows' bytes so far stay within the
 * budget (search/context.ts), so a page never reads more than the budget of messages for context.
 */
// In the Citus layout `$7` is the hits' session (withExtras), named on every message reference; the first branch
// of `turns` names its columns, as Citus's deparsed statement for the shard loses the CTE's column list.
function contextSql(t: Tables): string {
  const own = t.layout.scope("$7::text");
  return `WITH RECURSIVE
    hits(i, seq, depth, leaf) AS (SELECT * FROM unnest($1::integer[], $2::bigint[], $3::integer[], $4::bigint[])),
    up(i, seq, k) AS (
      SELECT h.i, m.parent_seq, 1 FROM hits h JOIN ${t.messages} m ON m.seq = h.seq${own("m")}
      UNION ALL SELECT up.i, m.parent_seq, up.k + 1 FROM up ${stepTo(t.messages, "m", "up.seq", own)} WHERE up.k < $5
    ),
    ${ancestorCte(
      t.messages,
      "anc",
      `SELECT h.i, LEAST(l.depth, h.depth + $5::integer), l.seq
       FROM hits h JOIN ${t.messages} l ON l.seq = h.leaf${own("l")} WHERE h.leaf IS NOT NULL`,
      false,
      own,
    )},
    path(i, seq, above, n) AS (
      SELECT anc.k, anc.seq, h.depth, 1 FROM anc JOIN hits h ON h.i = anc.k
      WHERE anc.depth = anc.target AND anc.depth > h.depth
      UNION ALL SELECT p.i, m.parent_seq, p.above, p.n + 1 FROM path p ${stepTo(t.messages, "m", "p.seq", own)}
      WHERE m.depth > p.above + 1 AND p.n < $5
    ),
    down(i, seq, k) AS (
      SELECT h.i, (SELECT MAX(c.seq) FROM ${t.messages} c WHERE c.parent_seq = h.seq${own("c")}), 1 FROM hits h
      WHERE h.leaf IS NULL
      UNION ALL SELECT down.i, (SELECT MAX(c.seq) FROM ${t.messages} c WHERE c.parent_seq = down.seq${own("c")}), down.k + 1
      FROM down WHERE down.seq IS NOT NULL AND down.k < $5
    ),
    turns(i, side, ord, seq, bytes) AS (
      SELECT up.i AS i, 0 AS side, -up.k AS ord, m.seq AS seq, m.bytes AS bytes FROM up JOIN ${t.messages} m ON m.seq = up.seq${own("m")}
      UNION ALL SELECT path.i, 1, m.depth, m.seq, m.bytes FROM path JOIN ${t.messages} m ON m.seq = path.seq${own("m")}
      UNION ALL SELECT down.i, 1, down.k, m.seq, m.bytes FROM down JOIN ${t.messages} m ON m.seq = down.seq${own("m")}
    ),
    firsts AS (SELECT *, row_number() OVER (PARTITION BY seq ORDER BY i, side, ord) AS n FROM turns),
    spent AS (
      SELECT *, sum(CASE WHEN n = 1 THEN bytes ELSE 0 END) OVER (ORDER BY i, side, ord ROWS UNBOUNDED PRECEDING) AS total
      FROM firsts
    )
    SELECT s.i, s.side, s.ord, s.seq::float8 AS seq, m.id, m.role, ${isoSql("m.created_at")} AS created_at,
      CASE WHEN s.n = 1 AND s.total <= $6::bigint THEN m.content END AS content,
      CASE WHEN s.n = 1 AND s.total <= $6::bigint THEN s.bytes ELSE 0 END::float8 AS spent
    FROM spent s JOIN ${t.messages} m ON m.seq = s.seq${own("m")}
    ORDER BY 1, 2, 3`;
}

/**
 * Sets each hit's `context`: up to `turns` turns before and after it along its branch (see contextSql), within
 * `budget` bytes of content; returns the bytes it read.
 */
async function addContext(
  executor: Executor,
  t: Tables,
  hits: readonly PageHit[],
  turns: number,
  budget: number,
): Promise<number> {
  const leaves = hits.map(({ candidate, result }) =>
    result.onActivePath === true && candidate.leafSeq !== null ? candidate.leafSeq : null,
  );
  const rows = await executor.query<ContextRow<string> & { spent: number }>(contextSql(t), [
    hits.map((_, i) => i),
    hits.map((hit) => hit.candidate.seq),
    hits.map((hit) => hit.candidate.depth),
    leaves,
    turns,
    budget,
    ...t.layout.routeParams(hits[0]?.candidate.sessionId),
  ]);
  // A turn sealed for an encrypted owner (a session registered with one after its first messages) is opened.
  for (const row of rows) {
    if (row.content === null || !isSealed(row.content)) continue;
    const sessionId = hits[Number(row.i)]?.result.sessionId ?? "";
    row.content = await openContent(executor.query, t, sessionId, row.content, row.id);
  }
  setContexts(
    hits.map(({ result }) => result),
    rows,
    (_row, content) => storedMessageText(content),
  );
  let spent = 0;
  for (const row of rows) spent += Number(row.spent);
  return spent;
}
