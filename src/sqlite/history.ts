import { overlayMessage } from "../message/overlay.js";
import { type CompactionRow, toStoredCompaction } from "../store/compactions.js";
import { chooseOverlays, type OverlayCandidate } from "../store/overlays.js";
import type { SessionMessage, StoredCompaction } from "../types.js";
import type { SqlDriver } from "./connection/driver.js";
import { freeTextSql, readFreeText } from "./connection/free-text.js";
import { isAncestor, type NodeRow, nodeBySeq, readSegment } from "./tree.js";

const COMPACTION_COLUMNS = `c.seq, c.id, ${freeTextSql("c.summary", "summary")}, c.from_message_id, c.to_message_id,
  c.details, c.created_at`;

/** A compaction row whose summary was read through freeTextSql. */
export type EncodedCompactionRow = CompactionRow & { summary_encoded: unknown };

/** A compaction row whose summary was read as bytes with its storage type (see free-text.ts). */
export function compactionOf(row: EncodedCompactionRow): StoredCompaction {
  return toStoredCompaction({ ...row, summary: readFreeText(row.summary, row.summary_encoded) });
}

/** Every overlay of a session, oldest first (superseded ones included). */
export function listCompactions(driver: SqlDriver, sessionNum: number): StoredCompaction[] {
  return driver
    .all<EncodedCompactionRow>(
      `SELECT ${COMPACTION_COLUMNS} FROM agent_compactions c WHERE c.session_num = ? ORDER BY c.seq`,
      [sessionNum],
    )
    .map(compactionOf);
}

interface ResolvedCompaction extends EncodedCompactionRow {
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

/**
 * The overlays that apply to the path from `topDepth` down to `leaf`, in path order (null when the session has
 * none there); endpoints are checked with O(log depth) skip-pointer lookups.
 */
export function chooseOnPath(
  driver: SqlDriver,
  sessionNum: number,
  leaf: NodeRow,
  topDepth: number,
): Candidate[] | null {
  const rows = driver.all<ResolvedCompaction>(
    `SELECT ${COMPACTION_COLUMNS}, f.seq AS from_seq, f.depth AS from_depth, t.seq AS to_seq, t.depth AS to_depth
     FROM agent_compactions c
     JOIN agent_messages f ON f.session_num = c.session_num AND f.id = c.from_message_id
     JOIN agent_messages t ON t.session_num = c.session_num AND t.id = c.to_message_id
     WHERE c.session_num = ? AND f.depth >= ? AND t.depth <= ?
     ORDER BY c.seq`,
    [sessionNum, topDepth, leaf.depth],
  );
  if (rows.length === 0) return null;
  const candidates: Candidate[] = rows.map((row, order) => ({
    compaction: compactionOf(row),
    fromDepth: row.from_depth,
    toDepth: row.to_depth,
    order,
    fromSeq: row.from_seq,
    toSeq: row.to_seq,
  }));
  const onPath = (candidate: Candidate): boolean => {
    const to = nodeBySeq(driver, candidate.toSeq);
    const from = nodeBySeq(driver, candidate.fromSeq);
    return (
      to !== undefined && from !== undefined && isAncestor(driver, to, leaf) && isAncestor(driver, from, to)
    );
  };
  return chooseOverlays(candidates, onPath);
}

/**
 * Reads the path from `topDepth` down to `leaf`, root first, with overlays applied exactly as the reference
 * does. Only the rows that are returned are read: a compacted range is skipped, not walked, because overlay
 * endpoints are checked with O(log depth) skip-pointer lookups.
 */
export function readPath(
  driver: SqlDriver,
  sessionNum: number,
  leaf: NodeRow,
  topDepth = 0,
  mayHaveOverlays = true,
): SessionMessage[] {
  const chosen = mayHaveOverlays ? chooseOnPath(driver, sessionNum, leaf, topDepth) : null;
  if (!chosen) return readSegment(driver, leaf.seq, topDepth);
  const result: SessionMessage[] = [];
  let next = topDepth;
  for (const overlay of chosen) {
    if (overlay.fromDepth > next) {
      const from = nodeBySeq(driver, overlay.fromSeq);
      if (from?.parent_seq != null) result.push(...readSegment(driver, from.parent_seq, next));
    }
    result.push(overlayMessage(overlay.compaction));
    next = overlay.toDepth + 1;
  }
  if (leaf.depth >= next) result.push(...readSegment(driver, leaf.seq, next));
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
