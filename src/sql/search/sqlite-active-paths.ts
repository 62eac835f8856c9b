/**
 * What SQLite answers an active-branch search that reads again with sessions kept to their active paths (the rounds
 * are src/search/active-paths.ts's, shared with Postgres; ranked recall's are run by src/search/pipeline.ts): which
 * sessions with other branches an answer drew on (branchedSessions), and for the vector channel's store-wide read,
 * which sessions its answer holds messages of off their paths (offPathSessions). The reads kept to the paths are
 * filters.ts's condition.
 */
import type { BranchedSession } from "../../search/active-paths.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { onPaths } from "../engines/sqlite/tree.js";
import { headBranched } from "./sqlite-page.js";
import type { SearchState } from "./sqlite-state.js";

// The sessions with messages off their active path (or no leaf at all), with their leaf's depth, among the sessions
// `?` (their numbers), or among those of the messages `?` (their seqs): the rule of search/on-path.ts's
// hasOtherBranches, in SQL.
const BRANCHED = `SELECT h.num, IFNULL(l.depth, 0) AS depth
  FROM agent_session_heads h LEFT JOIN agent_messages l ON l.seq = h.leaf_seq
  WHERE (l.depth IS NULL OR h.message_count <> l.depth + 1)`;
const BRANCHED_SESSIONS = `${BRANCHED} AND h.num IN (SELECT value FROM json_each(?))`;
const BRANCHED_SESSIONS_OF = `${BRANCHED}
  AND h.num IN (SELECT m.session_num FROM json_each(?) j JOIN agent_messages m ON m.seq = j.value)`;

/**
 * The sessions with other branches a search's answer drew on: the one it keeps to, else those among `sessions`
 * (numbers) or among the sessions of the messages `seqs`.
 */
export function branchedSessions(
  driver: SqlDriver,
  scope: SearchState["scope"],
  of: { sessions: Iterable<number> } | { seqs: readonly number[] },
): BranchedSession[] {
  if (scope !== undefined) {
    const { head } = scope;
    return headBranched(head) ? [{ num: scope.num, depth: head.leaf_depth ?? 0 }] : [];
  }
  return "seqs" in of
    ? driver.all<BranchedSession>(BRANCHED_SESSIONS_OF, [JSON.stringify(of.seqs)])
    : driver.all<BranchedSession>(BRANCHED_SESSIONS, [JSON.stringify([...of.sessions])]);
}

// The messages `?` (their seqs) of sessions with other branches: each with its session, its leaf and the leaf's depth.
const BRANCHED_MESSAGES = `SELECT m.seq, h.num, h.leaf_seq, IFNULL(l.depth, 0) AS depth
  FROM json_each(?) j JOIN agent_messages m ON m.seq = j.value JOIN agent_session_heads h ON h.num = m.session_num
  LEFT JOIN agent_messages l ON l.seq = h.leaf_seq
  WHERE (l.depth IS NULL OR h.message_count <> l.depth + 1)`;

/**
 * The sessions with a message among `seqs` off their active path, with their leaf's depth: only such a message can
 * crowd out one on a path, so only such a session is worth reading again kept to its path. The check is onPaths's
 * (one statement, a climb of O(log depth) rows per message, a path read whole only where that costs less).
 */
export function offPathSessions(driver: SqlDriver, seqs: readonly number[]): BranchedSession[] {
  const rows = driver.tuples<[number, number, number | null, number]>(BRANCHED_MESSAGES, [
    JSON.stringify(seqs),
  ]);
  const pairs: [number, number][] = [];
  const leafDepths = new Map<number, number>();
  for (const [seq, , leaf, depth] of rows) {
    if (leaf === null) continue;
    pairs.push([seq, leaf]);
    leafDepths.set(leaf, depth);
  }
  const on = onPaths(driver, pairs, leafDepths);
  const off = new Map<number, BranchedSession>();
  for (const [seq, num, , depth] of rows) if (!on.has(seq)) off.set(num, { num, depth });
  return [...off.values()];
}
