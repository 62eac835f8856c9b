/**
 * The message ids on one session's active path, for the fact channel of an active-branch search (search/facts.ts
 * `PathIds`): the fact store then reads only facts with a source on the path (docs/FACTS.md#recall).
 */
import { hasOtherBranches } from "../../search/on-path.js";
import type { Executor } from "../engines/postgres/client.js";
import { statement, type Tables } from "../engines/postgres/tables.js";
import { stepTo } from "../engines/postgres/tree.js";

// One round trip: the head (`$1` the session), and the walk of its path by the primary key only when the session has
// other branches and the path is at most `$2` long; each step to a shallower row (a damaged link cannot loop).
const pathIdsSql = statement((t) => {
  const own = t.layout.scope("$1::text");
  return `WITH RECURSIVE head AS (
    SELECT leaf_seq, leaf_depth, message_count FROM ${t.heads} WHERE session_id = $1::text
  ), walk(seq, parent_seq, depth, id) AS (
    SELECT m.seq, m.parent_seq, m.depth, m.id FROM head JOIN ${t.messages} m ON m.seq = head.leaf_seq${own("m")}
      WHERE head.message_count <> head.leaf_depth + 1 AND head.leaf_depth < $2::integer
    UNION ALL SELECT m.seq, m.parent_seq, m.depth, m.id FROM walk w ${stepTo(t.messages, "m", "w.parent_seq", own)}
      WHERE m.depth < w.depth
  ) SELECT leaf_seq, leaf_depth, message_count, (SELECT array_agg(id) FROM walk) AS ids FROM head`;
});

/**
 * The ids on the active path of `sessionId`, or undefined when every message of the session is on it (no other
 * branches) or the path is longer than `bound` (not walked): one statement, whose cost is the path's depth.
 */
export async function activePathIds(
  executor: Executor,
  t: Tables,
  sessionId: string,
  bound: number,
): Promise<string[] | undefined> {
  const [head] = await executor.query<{
    leaf_seq: string | null;
    leaf_depth: number;
    message_count: number;
    ids: string[] | null;
  }>(pathIdsSql(t), [sessionId, bound]);
  if (head === undefined || head.leaf_seq === null) return [];
  const depth = Number(head.leaf_depth);
  if (!hasOtherBranches(Number(head.leaf_seq), depth, Number(head.message_count))) return undefined;
  return depth + 1 > bound ? undefined : (head.ids ?? []);
}
