/**
 * Windowed path reads on SQLite for streaming history and the byte-budgeted window (src/store/history-stream.ts,
 * src/store/recent.ts): tree columns first (cheap, no content), content only for the rows a window returns.
 *
 * A file per engine on purpose, behind `PathBackend` (the walk itself is written once, store/history-stream.ts):
 * the plan differs. SQLite reads cost no round trip, so it climbs skip pointers one indexed row at a time in code
 * (`ancestorAt`, `nodeBySeq`), looks a leaf up by its own statement per kind (latest or by id), and checks only the
 * overlays that could still win (history.ts `chooseOnPath`), reading a continuation-row message back per row
 * (sql/engines/sqlite/chunks.ts). Postgres does each of these in one statement (postgres/history-stream.ts).
 */

import type { SessionMessage, StoredCompaction } from "../contract/message.js";
import { contentSql, resolveContent } from "../sql/engines/sqlite/chunks.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import { ancestorAt, type NodeRow, nodeBySeq } from "../sql/engines/sqlite/tree.js";
import { hydrate } from "../sql/media/sqlite.js";
import {
  type PathBackend,
  type PathItem,
  type PathRow,
  pathChanged,
  planPath,
  type WindowLimits,
  type WindowRow,
} from "../store/history-stream.js";
import { chooseOnPath, listCompactions } from "./history.js";

type Row = PathRow<number> & { node: NodeRow };
type WindowSqlRow = Pick<NodeRow, "seq" | "parent_seq" | "depth" | "bytes" | "cum_bytes"> & {
  content: unknown;
};

const LEAF = `SELECT h.num, EXISTS (SELECT 1 FROM agent_compactions c WHERE c.session_num = h.num) AS overlays,
  m.seq, m.parent_seq, m.depth, m.jump_seq, m.jump_depth, m.bytes, m.cum_bytes, m.tokens, m.cum_tokens
  FROM agent_session_heads h JOIN agent_messages m ON `;
const LEAF_LATEST = `${LEAF} m.seq = h.leaf_seq WHERE h.session_id = ?`;
const LEAF_BY_ID = `${LEAF} m.session_num = h.num AND m.id = ? WHERE h.session_id = ?`;

// A window carries only what the walk needs (every column costs per row); skip pointers are read for segment
// bottoms alone (leaf, plan), the only rows ancestor() starts from.
const WINDOW_COLUMNS = "seq, parent_seq, depth, bytes, cum_bytes, content";
const WINDOW_NODE = "seq, parent_seq, depth, bytes, cum_bytes";

// Newest first: at most `rows` up from `bottom` while depth >= `top`, stopping before the row that would
// overflow `maxBytes` once `minRows` are taken. Positional parameters only (every driver takes them).
const WINDOW_DOWN = `WITH RECURSIVE w(${WINDOW_COLUMNS}, n, acc) AS (
  SELECT ${WINDOW_NODE}, ${contentSql()}, 1, bytes FROM agent_messages WHERE seq = ? AND depth >= ? AND (? >= 1 OR bytes <= ?)
  UNION ALL
  SELECT m.seq, m.parent_seq, m.depth, m.bytes, m.cum_bytes, ${contentSql("m")}, w.n + 1, w.acc + m.bytes
  FROM agent_messages m JOIN w ON m.seq = w.parent_seq
  WHERE m.depth >= ? AND w.n < ? AND (w.n < ? OR w.acc + m.bytes <= ?)
) SELECT ${WINDOW_COLUMNS} FROM w`;

// Oldest first: the rows up from `bottom` to depth `top` (at most `rows`); only those whose bytes from `top` fit
// `maxBytes` (the path holds `base` bytes above `top`) and the row at `top` carry content; the others are not
// read past their tree columns.
const WINDOW_UP = `WITH RECURSIVE w(${WINDOW_COLUMNS}, n) AS (
  SELECT ${WINDOW_NODE}, CASE WHEN cum_bytes - ? <= ? OR depth = ? THEN ${contentSql()} END, 1
  FROM agent_messages WHERE seq = ? AND depth >= ?
  UNION ALL
  SELECT m.seq, m.parent_seq, m.depth, m.bytes, m.cum_bytes,
    CASE WHEN m.cum_bytes - ? <= ? OR m.depth = ? THEN ${contentSql("m")} END, w.n + 1
  FROM agent_messages m JOIN w ON m.seq = w.parent_seq WHERE m.depth >= ? AND w.n < ?
) SELECT ${WINDOW_COLUMNS} FROM w`;

const toRow = (node: NodeRow): Row => ({
  key: node.seq,
  parent: node.parent_seq,
  depth: node.depth,
  bytes: node.bytes,
  cumBytes: node.cum_bytes,
  node,
});

/** The windowed reads of one session of a SQLite database. */
export class SqlitePathBackend implements PathBackend<number> {
  private num = 0;
  private overlays = false;

  constructor(
    private readonly driver: SqlDriver,
    private readonly sessionId: string,
    private readonly canBeLeaf: (id: unknown) => boolean,
  ) {}

  async leaf(leafId: string | null | undefined): Promise<Row | null> {
    // An id no row can have (not a string included) names no message, as on the other backends: only an absent
    // one means the latest leaf.
    if (leafId !== undefined && leafId !== null && !this.canBeLeaf(leafId)) return null;
    const found =
      typeof leafId === "string"
        ? this.driver.get<NodeRow & { num: number; overlays: number }>(LEAF_BY_ID, [leafId, this.sessionId])
        : this.driver.get<NodeRow & { num: number; overlays: number }>(LEAF_LATEST, [this.sessionId]);
    if (!found) return null;
    const { num, overlays, ...node } = found;
    this.num = num;
    this.overlays = overlays !== 0;
    return toRow(node);
  }

  async plan(leaf: PathRow<number>): Promise<PathItem<number>[]> {
    const bottom = leaf as Row;
    const chosen = this.overlays ? chooseOnPath(this.driver, this.sessionId, this.num, bottom.node, 0) : null;
    if (!chosen) return [{ kind: "rows", bottom, top: 0 }];
    return planPath(bottom, chosen, (overlay) => {
      const from = nodeBySeq(this.driver, overlay.fromSeq);
      const above = from?.parent_seq == null ? undefined : nodeBySeq(this.driver, from.parent_seq);
      return above && toRow(above);
    });
  }

  async ancestor(node: PathRow<number>, depth: number): Promise<Row> {
    const found = ancestorAt(this.driver, (node as Row).node, depth);
    if (!found) throw pathChanged();
    return toRow(found);
  }

  async read(bottom: number, limits: WindowLimits): Promise<WindowRow<number>[]> {
    const { top, rows: limit, maxBytes, base, minRows } = limits;
    const rows =
      base === null
        ? this.driver.all<WindowSqlRow>(WINDOW_DOWN, [
            ...[bottom, top, minRows, maxBytes],
            ...[top, limit, minRows, maxBytes],
          ])
        : this.driver.all<WindowSqlRow>(WINDOW_UP, [
            ...[base, maxBytes, top, bottom, top],
            ...[base, maxBytes, top, top, limit],
          ]);
    return rows.map((r) => ({
      key: r.seq,
      parent: r.parent_seq,
      depth: r.depth,
      bytes: r.bytes,
      cumBytes: r.cum_bytes,
      json: r.content === null ? null : resolveContent(this.driver, r.content, this.sessionId),
    }));
  }

  async hydrate(messages: SessionMessage[]): Promise<SessionMessage[]> {
    return hydrate(this.driver, messages);
  }

  /** The session's overlays (none read when the last located leaf's session has none). */
  async compactions(): Promise<StoredCompaction[]> {
    return this.overlays ? listCompactions(this.driver, this.sessionId, this.num) : [];
  }
}
