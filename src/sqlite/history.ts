import type { SessionMessage, StoredCompaction } from "../contract/message.js";
import { overlayMessage } from "../message/overlay.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import { freeTextSql } from "../sql/engines/sqlite/free-text.js";
import { type NodeRow, nodeBySeq, onPaths, readSegment } from "../sql/engines/sqlite/tree.js";
import { openSummary } from "../sql/sealing/sqlite.js";
import { type CompactionRow, toStoredCompaction } from "../store/compactions.js";
import { chooseOverlays, type OverlayCandidate } from "../store/overlays.js";

const COMPACTION_COLUMNS = `c.seq, c.id, ${freeTextSql("c.summary", "summary")}, c.from_message_id, c.to_message_id,
  c.details, c.created_at`;

/** A compaction row whose summary was read through freeTextSql. */
export type EncodedCompactionRow = CompactionRow & { summary_encoded: unknown };

/**
 * A compaction row of `sessionId` whose summary was read as bytes with its storage type (see free-text.ts), the
 * summary opened when sealed.
 */
export function compactionOf(
  driver: SqlDriver,
  sessionId: string,
  row: EncodedCompactionRow,
): StoredCompaction {
  const summary = openSummary(driver, sessionId, row.id, row.summary, row.summary_encoded);
  return toStoredCompaction({ ...row, summary });
}

/** Every overlay of a session, oldest first (superseded ones included). */
export function listCompactions(
  driver: SqlDriver,
  sessionId: string,
  sessionNum: number,
): StoredCompaction[] {
  return driver
    .all<EncodedCompactionRow>(
      `SELECT ${COMPACTION_COLUMNS} FROM agent_compactions c WHERE c.session_num = ? ORDER BY c.seq`,
      [sessionNum],
    )
    .map((row) => compactionOf(driver, sessionId, row));
}

// Where each overlay of the session lies: only what choosing needs, so no summary is read (or decoded) before it
// is chosen.
interface OverlayEndpoints {
  seq: number;
  from_seq: number;
  to_seq: number;
  from_depth: number;
  to_depth: number;
}

export interface Candidate extends OverlayCandidate {
  fromSeq: number;
  toSeq: number;
}

const OVERLAY_ENDPOINTS = `SELECT c.seq, f.seq AS from_seq, f.depth AS from_depth, t.seq AS to_seq, t.depth AS to_depth
  FROM agent_compactions c
  JOIN agent_messages f ON f.session_num = c.session_num AND f.id = c.from_message_id
  JOIN agent_messages t ON t.session_num = c.session_num AND t.id = c.to_message_id
  WHERE c.session_num = ? AND f.depth >= ? AND t.depth <= ?
  ORDER BY c.seq`;
const COMPACTIONS_BY_SEQ = `SELECT ${COMPACTION_COLUMNS} FROM json_each(?) j JOIN agent_compactions c ON c.seq = j.value`;

/**
 * The overlays that apply to the path from `topDepth` down to `leaf`, in path order (null when the session has
 * none there). Only an overlay that could still win is checked to lie on the path (its endpoints climbed by skip
 * pointers), one statement each for the first few, then every endpoint at once (see LAZY_PATH_CHECKS); only the
 * chosen overlays' summaries are read.
 */
export function chooseOnPath(
  driver: SqlDriver,
  sessionId: string,
  sessionNum: number,
  leaf: NodeRow,
  topDepth: number,
): Candidate[] | null {
  const rows = driver.all<OverlayEndpoints>(OVERLAY_ENDPOINTS, [sessionNum, topDepth, leaf.depth]);
  if (rows.length === 0) return null;
  const spans = rows.map((row, order) => ({ row, fromDepth: row.from_depth, toDepth: row.to_depth, order }));
  let lazyChecks = 0;
  let batch: Set<number> | undefined;
  const chosen = chooseOverlays(spans, ({ row }) => {
    if (batch === undefined && ++lazyChecks > LAZY_PATH_CHECKS) batch = endpointsOnPath(driver, rows, leaf);
    const on =
      batch ??
      onPaths(driver, [
        [row.to_seq, leaf.seq],
        [row.from_seq, leaf.seq],
      ]);
    return on.has(row.to_seq) && on.has(row.from_seq);
  });
  if (chosen.length === 0) return [];
  const compactions = new Map<number, StoredCompaction>();
  const seqs = JSON.stringify(chosen.map(({ row }) => row.seq));
  for (const row of driver.all<EncodedCompactionRow & { seq: number }>(COMPACTIONS_BY_SEQ, [seqs])) {
    compactions.set(row.seq, compactionOf(driver, sessionId, row));
  }
  return chosen.map(({ row, fromDepth, toDepth, order }) => ({
    compaction: compactions.get(row.seq)!,
    fromDepth,
    toDepth,
    order,
    fromSeq: row.from_seq,
    toSeq: row.to_seq,
  }));
}

// Overlays checked one statement each before the rest are checked in one (endpointsOnPath). Nested overlays (each
// compaction from the first message, reaching further) are settled by the first check; a session whose forks each
// carry an overlay checks them all, and a statement each (~14 µs) made 1,000 such forks a 21.7 ms read.
const LAZY_PATH_CHECKS = 8;

/** Which endpoints of the overlays `rows` lie on the path to `leaf`, in one statement. */
function endpointsOnPath(driver: SqlDriver, rows: readonly OverlayEndpoints[], leaf: NodeRow): Set<number> {
  const endpoints = new Set<number>();
  for (const row of rows) endpoints.add(row.from_seq).add(row.to_seq);
  const pairs = [...endpoints].map((seq): [number, number] => [seq, leaf.seq]);
  return onPaths(driver, pairs, new Map([[leaf.seq, leaf.depth]]));
}

/**
 * Reads the path from `topDepth` down to `leaf`, root first, with overlays applied exactly as the reference
 * does. Only the rows that are returned are read: a compacted range is skipped, not walked, because overlay
 * endpoints are checked with O(log depth) skip-pointer lookups.
 */
export function readPath(
  driver: SqlDriver,
  sessionId: string,
  sessionNum: number,
  leaf: NodeRow,
  topDepth = 0,
  mayHaveOverlays = true,
): SessionMessage[] {
  const chosen = mayHaveOverlays ? chooseOnPath(driver, sessionId, sessionNum, leaf, topDepth) : null;
  if (!chosen) return readSegment(driver, sessionId, leaf.seq, topDepth);
  const result: SessionMessage[] = [];
  let next = topDepth;
  for (const overlay of chosen) {
    if (overlay.fromDepth > next) {
      const from = nodeBySeq(driver, overlay.fromSeq);
      if (from?.parent_seq != null) result.push(...readSegment(driver, sessionId, from.parent_seq, next));
    }
    result.push(overlayMessage(overlay.compaction));
    next = overlay.toDepth + 1;
  }
  if (leaf.depth >= next) result.push(...readSegment(driver, sessionId, leaf.seq, next));
  return result;
}

/** Id, role, byte size and token estimate of every row on the path to `leaf`, root first. */
export function pathStats(
  driver: SqlDriver,
  leaf: NodeRow,
): { id: string; role: string; bytes: number; tokens: number }[] {
  const rows = driver.all<{ id: string; role: string; bytes: number; tokens: number }>(
    `WITH RECURSIVE path(seq, parent_seq, id, role, bytes, tokens) AS (
       SELECT seq, parent_seq, id, role, bytes, tokens FROM agent_messages WHERE seq = ?
       UNION ALL
       SELECT m.seq, m.parent_seq, m.id, m.role, m.bytes, m.tokens FROM agent_messages m JOIN path p ON m.seq = p.parent_seq
     ) SELECT id, role, bytes, tokens FROM path`,
    [leaf.seq],
  );
  return rows.reverse().map((r) => ({ id: r.id, role: r.role, bytes: r.bytes, tokens: r.tokens }));
}
