/**
 * An active-branch search whose newest matches lie mostly off their sessions' active paths (a long exploration the
 * conversation came back from): its window held too few hits, so it reads again with those sessions kept to their
 * paths inside the read (filters.ts), the path's own newest matches taking the window. Which sessions, and how
 * often, is ActivePaths' to bound (src/search/active-paths.ts, shared with Postgres).
 */
import { ActivePaths, type BranchedSession } from "../../search/active-paths.js";
import type { SqlDriver } from "../connection/driver.js";
import { hasOtherBranches } from "./hits.js";
import type { SearchState } from "./state.js";

// The sessions with messages off their active path (or no leaf at all), with their leaf's depth, among the sessions
// `?` (their numbers), or among those of the messages `?` (their seqs): what hasOtherBranches (hits.ts) tells from a
// head.
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
    return hasOtherBranches(head) ? [{ num: scope.num, depth: head.leaf_depth ?? 0 }] : [];
  }
  return "seqs" in of
    ? driver.all<BranchedSession>(BRANCHED_SESSIONS_OF, [JSON.stringify(of.seqs)])
    : driver.all<BranchedSession>(BRANCHED_SESSIONS, [JSON.stringify([...of.sessions])]);
}

/** How a search reads again with sessions kept to their active paths (see keepToActivePaths). */
export interface ActivePathReads<T> {
  /** Whether an answer came back with too few hits. */
  short(answer: T): boolean;
  /** The sessions with other branches that took part in an answer. */
  crowding(answer: T): readonly BranchedSession[];
  /** The answer read again with `sessions` kept to their active paths. */
  reread(sessions: readonly number[]): T;
}

/**
 * `first`, or while it comes back short, the answer read again with the sessions that crowded it kept to their
 * active paths (those of earlier reads too), within the bounds of ActivePaths.
 */
export function keepToActivePaths<T>(first: T, reads: ActivePathReads<T>): T {
  let answer = first;
  const paths = new ActivePaths();
  while (reads.short(answer) && paths.add(reads.crowding(answer))) answer = reads.reread(paths.kept);
  return answer;
}
