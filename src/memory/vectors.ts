import { passesFilters } from "../search/options.js";
import { StoreVectors } from "../search/vectors/channel.js";
import { dot, TopK } from "../search/vectors/score.js";
import type {
  Embedder,
  NearestRead,
  PendingText,
  VectorBackend,
  VectorFailure,
  VectorStoreOptions,
  VectorWrite,
} from "../search/vectors/types.js";
import { activePath, type MemoryMessageRow, type MemoryBackend as MemoryStore } from "./data.js";

interface Entry {
  sessionId: string;
  /** The text the vector was made from: the row's current text when it is current. */
  text: string;
  textHash: string;
  vector: Float32Array | null;
  /** Why the embedder refused this text (no vector then). */
  failure?: string;
}

/** Vectors of a MemoryStore, kept beside its rows and scored by brute force (memory holds no large stores). */
class MemoryVectorBackend implements VectorBackend {
  readonly kind = "memory";
  private readonly entries = new Map<number, Entry>();
  private size: number | null = null;

  constructor(private readonly store: MemoryStore) {}

  async ensure(): Promise<void> {}

  // The rows of the sessions named (of every session when none are).
  private *rows(sessionIds?: Iterable<string>): Generator<[string, MemoryMessageRow]> {
    const ids = sessionIds ?? this.store.sessionIds();
    for (const id of ids) {
      for (const row of this.store.sessionData(id, false)?.rows.values() ?? []) yield [id, row];
    }
  }

  private isCurrent(row: MemoryMessageRow): boolean {
    return this.entries.get(row.seq)?.text === row.text;
  }

  private pendingRow(sessionId: string, row: MemoryMessageRow): PendingText {
    return {
      seq: row.seq,
      session: sessionId,
      text: row.text,
      contentHash: null,
      storedTextHash: this.entries.get(row.seq)?.textHash ?? null,
    };
  }

  async pending(after: number, limit: number): Promise<PendingText[]> {
    const out: PendingText[] = [];
    for (const [sessionId, row] of this.rows()) {
      if (row.seq > after && !this.isCurrent(row)) out.push(this.pendingRow(sessionId, row));
    }
    return out.sort((a, b) => a.seq - b.seq).slice(0, limit);
  }

  async pendingIds(sessionId: string, ids: readonly string[]): Promise<PendingText[]> {
    const rows = this.store.sessionData(sessionId, false)?.rows;
    const out: PendingText[] = [];
    for (const id of ids) {
      const row = rows?.get(id);
      if (row && !this.isCurrent(row)) out.push(this.pendingRow(sessionId, row));
    }
    return out;
  }

  async write(rows: readonly VectorWrite[]): Promise<void> {
    // A message deleted since its text was read gets no vector: it would outlive the message.
    const live = new Map<string, Set<number>>();
    const exists = (sessionId: string, seq: number) => {
      let seqs = live.get(sessionId);
      if (seqs === undefined) {
        seqs = new Set(
          Array.from(this.store.sessionData(sessionId, false)?.rows.values() ?? [], (r) => r.seq),
        );
        live.set(sessionId, seqs);
      }
      return seqs.has(seq);
    };
    for (const row of rows) {
      if (!exists(String(row.session), row.seq)) continue;
      const kept = row.vector === "keep" ? this.entries.get(row.seq) : undefined;
      const vector = row.vector === "keep" ? (kept?.vector ?? null) : row.vector;
      const failure = row.vector === "keep" ? kept?.failure : row.failure;
      if (vector) this.size ??= vector.length;
      this.entries.set(row.seq, {
        sessionId: String(row.session),
        text: row.text,
        textHash: row.textHash,
        vector,
        ...(failure === undefined ? {} : { failure }),
      });
    }
  }

  async nearest(query: Float32Array, read: NearestRead): Promise<number[]> {
    const top = new TopK(read.limit);
    const named = read.sessionIds ?? (read.sessionId === undefined ? undefined : [read.sessionId]);
    // An owner's sessions come from the registry's owner map: no other session is looked at.
    const owned = read.owner === undefined ? undefined : this.store.registry.ownedIds(read.owner);
    const scope =
      owned === undefined ? named : named === undefined ? owned : named.filter((id) => owned.has(id));
    // The active paths of the sessions in scope (every session when none is named), each walked once when its first
    // row comes: memory scores every message in scope anyway.
    const paths = new Map<string, Set<MemoryMessageRow>>();
    const pathOf = (sessionId: string) => {
      let path = paths.get(sessionId);
      if (path === undefined) {
        const data = this.store.sessionData(sessionId, false);
        path = data === undefined ? new Set() : activePath(data);
        paths.set(sessionId, path);
      }
      return path;
    };
    for (const [sessionId, row] of this.rows(scope)) {
      const entry = this.entries.get(row.seq);
      if (!entry?.vector || entry.text !== row.text || !passesFilters(read, row.role, row.createdAt))
        continue;
      if (!read.activePath || pathOf(sessionId).has(row)) top.add(row.seq, dot(query, entry.vector));
    }
    return top.seqs();
  }

  async messageIds(seqs: readonly number[]): Promise<Map<number, { sessionId: string; messageId: string }>> {
    const wanted = new Set(seqs);
    const out = new Map<number, { sessionId: string; messageId: string }>();
    // Memory keys rows by session and id, not seq: one pass over the rows (memory holds no large stores).
    for (const [sessionId, row] of this.rows())
      if (wanted.has(row.seq)) out.set(row.seq, { sessionId, messageId: row.id });
    return out;
  }

  /** Drops the vectors of a session at once (an erasure); how many there were. */
  forget(sessionId: string): number {
    let dropped = 0;
    for (const [seq, entry] of this.entries) {
      if (entry.sessionId !== sessionId) continue;
      this.entries.delete(seq);
      dropped++;
    }
    return dropped;
  }

  async prune(sessionId?: string): Promise<void> {
    const live = new Set<number>();
    for (const [, row] of this.rows(sessionId === undefined ? undefined : [sessionId])) live.add(row.seq);
    for (const [seq, entry] of this.entries) {
      if ((sessionId === undefined || entry.sessionId === sessionId) && !live.has(seq))
        this.entries.delete(seq);
    }
  }

  async counts(): Promise<{ embedded: number; pending: number; failed: number }> {
    let embedded = 0;
    let pending = 0;
    let failed = 0;
    for (const [, row] of this.rows()) {
      if (!this.isCurrent(row)) pending++;
      else if (this.entries.get(row.seq)?.failure === undefined) embedded++;
      else failed++;
    }
    return { embedded, pending, failed };
  }

  async failures(limit: number): Promise<VectorFailure[]> {
    const out: (VectorFailure & { seq: number })[] = [];
    for (const [sessionId, row] of this.rows()) {
      const reason = this.entries.get(row.seq)?.failure;
      if (reason !== undefined && this.isCurrent(row))
        out.push({ seq: row.seq, sessionId, messageId: row.id, reason });
    }
    return out
      .sort((a, b) => b.seq - a.seq)
      .slice(0, limit)
      .map(({ sessionId, messageId, reason }) => ({ sessionId, messageId, reason }));
  }

  async clearFailures(): Promise<void> {
    for (const [seq, entry] of this.entries) if (entry.failure !== undefined) this.entries.delete(seq);
  }

  async dimensions(): Promise<number | null> {
    return this.size;
  }

  async reset(): Promise<void> {
    this.entries.clear();
    this.size = null;
  }

  async maxSeq(): Promise<number> {
    let max = 0;
    for (const [, row] of this.rows()) max = Math.max(max, row.seq);
    return max;
  }
}

/** The vector channel of a MemoryStore opened with an `embedder`. */
export function memoryVectors(
  store: MemoryStore,
  options: VectorStoreOptions & { embedder: Embedder },
): { vectors: StoreVectors; forget: (sessionId: string) => number } {
  const backend = new MemoryVectorBackend(store);
  return { vectors: new StoreVectors(backend, options, store.feed), forget: (id) => backend.forget(id) };
}
