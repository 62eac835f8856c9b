/**
 * Windowed path reads of a MemoryStore session (src/store/history-stream.ts): rows are already in memory, so the
 * path is a list of row references; parsing and payload restoring happen per batch.
 */

import type { SessionMessage, StoredCompaction } from "../contract/message.js";
import {
  type PathBackend,
  type PathItem,
  type PathRow,
  pathChanged,
  planPath,
  type WindowLimits,
  type WindowRow,
} from "../store/history-stream.js";
import { hydrateSync } from "../store/media/offload.js";
import { chooseOverlays, type OverlayCandidate } from "../store/overlays.js";
import type { MemorySessionData, MemoryBackend as MemoryStore, MemoryMessageRow as Row } from "./data.js";

/** The windowed reads of one session of a MemoryStore (the key of a row is the row). */
export class MemoryPathBackend implements PathBackend<Row> {
  private readonly depths = new Map<Row, number>();
  private readonly cumBytes: number[] = [];
  private path: Row[] = [];

  constructor(
    private readonly store: MemoryStore,
    private readonly data: MemorySessionData | undefined,
  ) {}

  private rowOf(row: Row): PathRow<Row> {
    const depth = this.depths.get(row);
    if (depth === undefined) throw pathChanged();
    return { key: row, parent: row.parent, depth, bytes: row.bytes, cumBytes: this.cumBytes[depth] ?? 0 };
  }

  async leaf(leafId: string | null | undefined): Promise<PathRow<Row> | null> {
    const data = this.data;
    const leaf = !data ? null : leafId === undefined || leafId === null ? data.leaf : data.rows.get(leafId);
    if (!leaf) return null;
    const path: Row[] = [];
    for (let row: Row | null = leaf; row; row = row.parent) path.push(row);
    path.reverse();
    this.path = path;
    let totalBytes = 0;
    for (const [depth, row] of path.entries()) {
      this.depths.set(row, depth);
      totalBytes += row.bytes;
      this.cumBytes.push(totalBytes);
    }
    return this.rowOf(leaf);
  }

  async plan(leaf: PathRow<Row>): Promise<PathItem<Row>[]> {
    const candidates: OverlayCandidate[] = [];
    this.compactionsNow().forEach((compaction, order) => {
      const from = this.data?.rows.get(compaction.fromMessageId);
      const to = this.data?.rows.get(compaction.toMessageId);
      const fromDepth = from && this.depths.get(from);
      const toDepth = to && this.depths.get(to);
      if (fromDepth !== undefined && toDepth !== undefined)
        candidates.push({ compaction, fromDepth, toDepth, order });
    });
    return planPath(leaf, chooseOverlays(candidates), (overlay) =>
      this.rowOf(this.path[overlay.fromDepth - 1]!),
    );
  }

  async ancestor(_node: PathRow<Row>, depth: number): Promise<PathRow<Row>> {
    const row = this.path[depth];
    if (!row) throw pathChanged();
    return this.rowOf(row);
  }

  async read(bottom: Row, limits: WindowLimits): Promise<WindowRow<Row>[]> {
    const rows: WindowRow<Row>[] = [];
    let used = 0;
    for (let row: Row | null = bottom; row && rows.length < limits.rows; row = row.parent) {
      const found = this.rowOf(row);
      if (found.depth < limits.top) break;
      if (limits.base === null) {
        if (rows.length >= limits.minRows && used + row.bytes > limits.maxBytes) break;
        used += row.bytes;
        rows.push({ ...found, json: row.json });
      } else {
        const fits = found.cumBytes - limits.base <= limits.maxBytes || found.depth === limits.top;
        rows.push({ ...found, json: fits ? row.json : null });
      }
    }
    return rows;
  }

  async hydrate(messages: SessionMessage[]): Promise<SessionMessage[]> {
    return hydrateSync(messages, (hashes) => this.store.attachments.load(hashes));
  }

  private compactionsNow(): StoredCompaction[] {
    return this.data?.compactions ?? [];
  }

  /** The session's overlays, oldest first. */
  async compactions(): Promise<StoredCompaction[]> {
    return this.compactionsNow();
  }
}
