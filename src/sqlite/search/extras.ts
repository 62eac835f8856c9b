/**
 * What a search adds to its hits beyond the message: the compaction overlay that covers a hit (its summary stands
 * for the hit in the history, the original is kept) and, on request, the turns around it along its branch.
 */
import { storedMessageText } from "../../message/text.js";
import type { SearchPlan } from "../../search/options.js";
import type { SearchContextTurn, SearchResult } from "../../types.js";
import { contentSql, resolveContent } from "../chunks.js";
import type { SqlDriver } from "../connection/driver.js";
import { ancestorAt, isAncestor, type NodeRow, nodeById, nodeBySeq } from "../tree.js";
import type { Hit } from "./hits.js";

/** Newest overlays of a session looked at for the mark: an overlay is one summary, so a session has few. */
const MAX_OVERLAYS = 256;

const TURN_COLUMNS = `m.id, m.role, ${contentSql("m")} AS content, m.created_at`;
// Up to `?` ancestors of a message, nearest first.
const BEFORE = `WITH RECURSIVE up(seq, k) AS (
    SELECT parent_seq, 1 FROM agent_messages WHERE seq = ?
    UNION ALL SELECT m.parent_seq, up.k + 1 FROM agent_messages m JOIN up ON m.seq = up.seq WHERE up.k < ?
  ) SELECT ${TURN_COLUMNS} FROM up JOIN agent_messages m ON m.seq = up.seq ORDER BY up.k DESC`;
// A message and its ancestors down to (not including) a depth, oldest first: the active path below a hit.
const PATH_DOWN_TO = `WITH RECURSIVE up(seq) AS (
    SELECT ? UNION ALL SELECT m.parent_seq FROM agent_messages m JOIN up ON m.seq = up.seq WHERE m.depth > ?
  ) SELECT ${TURN_COLUMNS} FROM up JOIN agent_messages m ON m.seq = up.seq WHERE m.depth > ? ORDER BY m.depth`;
// Up to `?` newest replies in a chain below a message, oldest first.
const NEWEST_REPLIES = `WITH RECURSIVE down(seq, k) AS (
    SELECT (SELECT MAX(seq) FROM agent_messages WHERE parent_seq = ?), 1
    UNION ALL SELECT (SELECT MAX(c.seq) FROM agent_messages c WHERE c.parent_seq = down.seq), down.k + 1
      FROM down WHERE down.seq IS NOT NULL AND down.k < ?
  ) SELECT ${TURN_COLUMNS} FROM down JOIN agent_messages m ON m.seq = down.seq ORDER BY down.k`;

type TurnRow = { id: string; role: string; content: unknown; created_at: string };

/** The results of `hits`, each with its overlay mark and, when the plan asks, its context. */
export function withExtras(driver: SqlDriver, hits: readonly Hit[], plan: SearchPlan): SearchResult[] {
  const overlays = new Map<number, { id: string; from: NodeRow; to: NodeRow }[]>();
  return hits.map(({ seq, head, result }) => {
    let covering = overlays.get(head.session_num);
    if (covering === undefined) {
      covering = head.has_overlays === false ? [] : overlaysOf(driver, head.session_num);
      overlays.set(head.session_num, covering);
    }
    const node = covering.length > 0 || plan.context > 0 ? nodeBySeq(driver, seq) : undefined;
    if (node !== undefined) {
      const overlay = covering.find(
        ({ from, to }) => isAncestor(driver, from, node) && isAncestor(driver, node, to),
      );
      if (overlay !== undefined) result.compactedBy = overlay.id;
      if (plan.context > 0)
        result.context = contextOf(driver, node, head.leaf_seq, result.onActivePath === true, plan.context);
    }
    return result;
  });
}

function overlaysOf(driver: SqlDriver, sessionNum: number): { id: string; from: NodeRow; to: NodeRow }[] {
  const rows = driver.all<{ id: string; from_id: string; to_id: string }>(
    `SELECT id, from_message_id AS from_id, to_message_id AS to_id FROM agent_compactions
     WHERE session_num = ? ORDER BY seq DESC LIMIT ${MAX_OVERLAYS}`,
    [sessionNum],
  );
  const overlays: { id: string; from: NodeRow; to: NodeRow }[] = [];
  for (const row of rows) {
    const from = nodeById(driver, sessionNum, row.from_id);
    const to = nodeById(driver, sessionNum, row.to_id);
    if (from !== undefined && to !== undefined) overlays.push({ id: row.id, from, to });
  }
  return overlays;
}

function contextOf(driver: SqlDriver, node: NodeRow, leafSeq: number | null, onPath: boolean, turns: number) {
  const before = driver.all<TurnRow>(BEFORE, [node.seq, turns]).map((row) => turnOf(driver, row));
  let afterRows: TurnRow[];
  const leaf = onPath && leafSeq !== null ? nodeBySeq(driver, leafSeq) : undefined;
  if (leaf !== undefined) {
    // Along the active path: its message `turns` below the hit (or the leaf), and the path up to the hit.
    const bottom = ancestorAt(driver, leaf, Math.min(leaf.depth, node.depth + turns));
    afterRows =
      bottom === undefined || bottom.depth <= node.depth
        ? []
        : driver.all<TurnRow>(PATH_DOWN_TO, [bottom.seq, node.depth + 1, node.depth]);
  } else afterRows = driver.all<TurnRow>(NEWEST_REPLIES, [node.seq, turns]);
  return { before, after: afterRows.map((row) => turnOf(driver, row)) };
}

function turnOf(driver: SqlDriver, row: TurnRow): SearchContextTurn {
  return {
    id: row.id,
    role: row.role,
    content: storedMessageText(resolveContent(driver, row.content)),
    createdAt: row.created_at,
  };
}
