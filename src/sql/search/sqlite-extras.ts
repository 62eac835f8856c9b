/**
 * What a search adds to its hits beyond the message: the compaction overlay that covers a hit (its summary stands
 * for the hit in the history, the original is kept) and, on request, the turns around it along its branch.
 */

import type { SearchResult } from "../../contract/search.js";
import { storedMessageText } from "../../message/text.js";
import { type ContextRow, SEARCH_CONTEXT_BYTES, setContexts } from "../../search/context.js";
import type { SearchPlan } from "../../search/options.js";
import { markOverlays, type OverlayRow, type OverlaySource } from "../../search/overlay-marks.js";
import { SEARCH_OVERLAYS } from "../../store/limits.js";
import { contentSql, resolveContent } from "../engines/sqlite/chunks.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { firstCovering, type OverlayNode } from "./sqlite-overlay-climbs.js";
import type { Hit } from "./sqlite-page.js";

// The turns around every hit of a page in one statement (a walk per hit was ~15 statements with a long path). The
// hits come as JSON rows [number, seq, leaf]: the leaf whose path gives the turns after the hit when it is
// on the active path, else null (its newest replies). Each walk is bounded by the turns asked for, or, climbing from
// the leaf by skip pointers as tree.ts does, by strictly shallower rows, so a corrupt link cannot loop; a walk
// carries what it needs of its hit, since joining the hits again at each step made a page of 1,000 quadratic. Rows:
// the hit's number, side (0 before, 1 after) and an order within the side, oldest first, and the turn's seq. A
// message bordering several hits is read once: only its first row (in that order) carries its content, and only
// while the first rows' bytes so far stay within the budget (search/context.ts), so a page never reads
// more than the budget of messages for context.
const AROUND_HITS = `WITH RECURSIVE
  hits(i, seq, depth, leaf) AS (
    SELECT json_extract(j.value, '$[0]'), m.seq, m.depth, json_extract(j.value, '$[2]')
      FROM json_each(?) j JOIN agent_messages m ON m.seq = json_extract(j.value, '$[1]')
  ),
  up(i, seq, k) AS (
    SELECT h.i, m.parent_seq, 1 FROM hits h JOIN agent_messages m ON m.seq = h.seq
    UNION ALL SELECT up.i, m.parent_seq, up.k + 1 FROM up JOIN agent_messages m ON m.seq = up.seq WHERE up.k < ?
  ),
  anc(i, above, target, seq, depth, parent_seq, jump_seq, jump_depth) AS (
    SELECT h.i, h.depth, MIN(l.depth, h.depth + ?), l.seq, l.depth, l.parent_seq, l.jump_seq, l.jump_depth
      FROM hits h JOIN agent_messages l ON l.seq = h.leaf
    UNION ALL
    SELECT a.i, a.above, a.target, m.seq, m.depth, m.parent_seq, m.jump_seq, m.jump_depth
      FROM anc a JOIN agent_messages m
      ON m.seq = CASE WHEN a.jump_seq IS NOT NULL AND a.jump_depth >= a.target THEN a.jump_seq ELSE a.parent_seq END
      WHERE a.depth > a.target AND m.depth < a.depth
  ),
  below(i, seq, above, k) AS (
    SELECT i, seq, above, 1 FROM anc WHERE depth = target AND depth > above
    UNION ALL SELECT b.i, m.parent_seq, b.above, b.k + 1 FROM below b JOIN agent_messages m ON m.seq = b.seq
      WHERE m.depth > b.above + 1 AND b.k < ?
  ),
  down(i, seq, k) AS (
    SELECT h.i, (SELECT MAX(c.seq) FROM agent_messages c WHERE c.parent_seq = h.seq), 1 FROM hits h
      WHERE h.leaf IS NULL
    UNION ALL SELECT d.i, (SELECT MAX(c.seq) FROM agent_messages c WHERE c.parent_seq = d.seq), d.k + 1
      FROM down d WHERE d.seq IS NOT NULL AND d.k < ?
  ),
  turns(i, side, ord, seq, bytes) AS (
    SELECT up.i, 0, -up.k, m.seq, m.bytes FROM up JOIN agent_messages m ON m.seq = up.seq
    UNION ALL SELECT below.i, 1, m.depth, m.seq, m.bytes FROM below JOIN agent_messages m ON m.seq = below.seq
    UNION ALL SELECT down.i, 1, down.k, m.seq, m.bytes FROM down JOIN agent_messages m ON m.seq = down.seq
  ),
  firsts AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY seq ORDER BY i, side, ord) AS n FROM turns),
  spent AS (
    SELECT *, SUM(CASE WHEN n = 1 THEN bytes ELSE 0 END) OVER (ORDER BY i, side, ord ROWS UNBOUNDED PRECEDING) AS total
    FROM firsts
  )
  SELECT s.i, s.side, s.ord, s.seq, m.id, m.role, m.created_at,
    CASE WHEN s.n = 1 AND s.total <= ? THEN ${contentSql("m")} END AS content
  FROM spent s JOIN agent_messages m ON m.seq = s.seq
  ORDER BY 1, 2, 3`;

/** The results of `hits`, each with its overlay mark and, when the plan asks, its context. */
export function withExtras(driver: SqlDriver, hits: readonly Hit[], plan: SearchPlan): SearchResult[] {
  markOverlays(
    overlaySource(driver),
    hits.map(({ seq, depth, head, result }) => ({
      seq,
      depth,
      session: head.session_num,
      overlaid: head.has_overlays,
      result,
    })),
  );
  if (plan.context > 0 && hits.length > 0) addContext(driver, hits, plan.context);
  return hits.map((hit) => hit.result);
}

/**
 * The overlay marks' source (search/overlay-marks.ts): a session's overlays in one statement (all it may need, as
 * statements cost no round trip), and every hit checked against its overlays by the climbs of overlay-climbs.ts,
 * three statements at most for the page.
 */
function overlaySource(driver: SqlDriver): OverlaySource<OverlayNode> {
  return {
    firstRead: SEARCH_OVERLAYS,
    overlays: (sessions, limit) =>
      [...sessions].flatMap(([session, before]) => overlaysOf(driver, Number(session), before, limit)),
    firstCovering: (checks) => firstCovering(driver, checks),
  };
}

// A session's newest overlays (older than a seq, when given) with the seqs and depths of their first and last
// messages, null when a message is gone (the overlay covers nothing).
const OVERLAYS = `SELECT c.id, c.seq, f.seq AS f_seq, f.depth AS f_depth, e.seq AS e_seq, e.depth AS e_depth
  FROM (SELECT seq, id, from_message_id, to_message_id FROM agent_compactions
        WHERE session_num = ? AND (? IS NULL OR seq < ?) ORDER BY seq DESC LIMIT ?) c
  LEFT JOIN agent_messages f ON f.session_num = ? AND f.id = c.from_message_id
  LEFT JOIN agent_messages e ON e.session_num = ? AND e.id = c.to_message_id
  ORDER BY c.seq DESC`;

type OverlayColumns = { id: string; seq: number } & {
  [K in keyof OverlayNode as `f_${K}` | `e_${K}`]: OverlayNode[K] | null;
};

function overlaysOf(
  driver: SqlDriver,
  sessionNum: number,
  before: number | null,
  limit: number,
): OverlayRow<OverlayNode>[] {
  const node = (row: OverlayColumns, end: "f" | "e"): OverlayNode | null => {
    const seq = row[`${end}_seq`];
    const depth = row[`${end}_depth`];
    return seq === null || depth === null ? null : { seq, depth };
  };
  return driver
    .all<OverlayColumns>(OVERLAYS, [sessionNum, before, before, limit, sessionNum, sessionNum])
    .map((row) => ({
      id: row.id,
      seq: row.seq,
      session: sessionNum,
      from: node(row, "f"),
      to: node(row, "e"),
    }));
}

/** Sets each hit's `context`: up to `turns` turns before and after it along its branch (see AROUND_HITS). */
function addContext(driver: SqlDriver, hits: readonly Hit[], turns: number): void {
  const rows = hits.map(({ seq, head, result }, i) => [
    i,
    seq,
    result.onActivePath === true ? head.leaf_seq : null,
  ]);
  const results = hits.map(({ result }) => result);
  // The turns around a hit are of the hit's session: sealed ones (a session registered with a keyed owner after its
  // first messages) open with its key.
  setContexts(
    results,
    driver.all<ContextRow<unknown>>(AROUND_HITS, [
      JSON.stringify(rows),
      turns,
      turns,
      turns,
      turns,
      SEARCH_CONTEXT_BYTES,
    ]),
    (row, content) => storedMessageText(resolveContent(driver, content, results[Number(row.i)]!.sessionId)),
  );
}
