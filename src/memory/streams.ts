import type { StreamChunk, StreamHead, StreamRead, StreamStore } from "../contract/streams.js";

interface Kept extends StreamHead {
  chunks: StreamChunk[];
}

/** The memory store's kept streams: one per session, in a Map. */
export class MemoryStreams implements StreamStore {
  private readonly streams = new Map<string, Kept>();

  constructor(private readonly assertOpen: () => void) {}

  async start(sessionId: string, streamId: string, now: number): Promise<void> {
    this.assertOpen();
    this.streams.set(sessionId, { streamId, state: "live", error: null, updatedAt: now, chunks: [] });
  }

  async append(
    sessionId: string,
    streamId: string,
    chunks: readonly StreamChunk[],
    now: number,
  ): Promise<boolean> {
    this.assertOpen();
    const kept = this.live(sessionId, streamId);
    if (kept === null) return false;
    kept.chunks.push(...chunks.map(({ seq, chunk }) => ({ seq, chunk })));
    kept.updatedAt = now;
    return true;
  }

  async end(sessionId: string, streamId: string, error: string | null, now: number): Promise<void> {
    this.assertOpen();
    const kept = this.live(sessionId, streamId);
    if (kept === null) return;
    kept.state = error === null ? "done" : "failed";
    kept.error = error;
    kept.updatedAt = now;
  }

  async head(sessionId: string): Promise<StreamHead | null> {
    this.assertOpen();
    const kept = this.streams.get(sessionId);
    return kept ? headOf(kept) : null;
  }

  async read(
    sessionId: string,
    streamId: string,
    afterSeq: number,
    limit: number,
  ): Promise<StreamRead | null> {
    this.assertOpen();
    const kept = this.streams.get(sessionId);
    if (kept?.streamId !== streamId) return null;
    // Chunks are kept in seq order from 0 with no gap, so the first one after afterSeq is at index afterSeq + 1.
    const chunks = kept.chunks.slice(afterSeq + 1, afterSeq + 1 + limit).map((c) => ({ ...c }));
    return { ...headOf(kept), chunks };
  }

  async drop(sessionId: string, streamId: string): Promise<void> {
    this.assertOpen();
    if (this.streams.get(sessionId)?.streamId === streamId) this.streams.delete(sessionId);
  }

  async expire(before: number): Promise<number> {
    this.assertOpen();
    let dropped = 0;
    for (const [sessionId, kept] of this.streams) {
      if (kept.updatedAt < before) {
        this.streams.delete(sessionId);
        dropped++;
      }
    }
    return dropped;
  }

  async countChunks(): Promise<number> {
    this.assertOpen();
    let count = 0;
    for (const kept of this.streams.values()) count += kept.chunks.length;
    return count;
  }

  /** Drops a session's stream at once (the session is deleted or erased). */
  forget(sessionId: string): void {
    this.streams.delete(sessionId);
  }

  private live(sessionId: string, streamId: string): Kept | null {
    const kept = this.streams.get(sessionId);
    return kept?.streamId === streamId && kept.state === "live" ? kept : null;
  }
}

function headOf(kept: Kept): StreamHead {
  return { streamId: kept.streamId, state: kept.state, error: kept.error, updatedAt: kept.updatedAt };
}
