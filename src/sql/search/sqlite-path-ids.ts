/**
 * The message ids on one session's active path, for the fact channel of an active-branch search (search/facts.ts
 * `PathIds`): the fact store then reads only facts with a source on the path (docs/FACTS.md#recall).
 */
import { hasOtherBranches } from "../../search/on-path.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";

// The ids of the path from the message `?` to its root, each step to a shallower row (a damaged link cannot loop).
const PATH_IDS = `WITH RECURSIVE path(seq, parent_seq, depth, id) AS (
    SELECT seq, parent_seq, depth, id FROM agent_messages WHERE seq = ?
    UNION ALL SELECT m.seq, m.parent_seq, m.depth, m.id FROM path p JOIN agent_messages m ON m.seq = p.parent_seq
      WHERE m.depth < p.depth
  ) SELECT id FROM path`;

/**
 * The ids on the active path of `sessionId`, or undefined when every message of the session is on it (no other
 * branches: the head tells, no walk) or the path is longer than `bound` (not read). One read of the head, then one
 * walk of the path by the primary key: its cost is the path's depth.
 */
export function activePathIds(driver: SqlDriver, sessionId: string, bound: number): string[] | undefined {
  const head = driver.get<{ leaf_seq: number | null; leaf_depth: number | null; message_count: number }>(
    `SELECT h.leaf_seq, l.depth AS leaf_depth, h.message_count FROM agent_session_heads h
     LEFT JOIN agent_messages l ON l.seq = h.leaf_seq WHERE h.session_id = ?`,
    [sessionId],
  );
  if (head === undefined) return [];
  if (!hasOtherBranches(head.leaf_seq, head.leaf_depth, head.message_count)) return undefined;
  if (head.leaf_seq === null || head.leaf_depth === null) return [];
  if (head.leaf_depth + 1 > bound) return undefined;
  return driver.column<string>(PATH_IDS, [head.leaf_seq]);
}
