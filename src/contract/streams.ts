// Optional store capability: the chunks of a streaming answer, kept while it runs so a reloaded page can rejoin it.
import type { SessionStore } from "./store.js";

/** One kept chunk: its place in the stream (0, 1, 2, … with no gap) and its text (one SSE event). */
export interface StreamChunk {
  seq: number;
  chunk: string;
}

/** Where a session's kept stream is: running, finished, or failed (its `error` says why). */
export type StreamState = "live" | "done" | "failed";

/** A session's kept stream, without its chunks. */
export interface StreamHead {
  streamId: string;
  state: StreamState;
  /** The failure a reader is shown after the last chunk; null unless `failed`. */
  error: string | null;
  /** When the writer last wrote (ms since the epoch): a live stream not written for long has lost its writer. */
  updatedAt: number;
}

/** What one read of a kept stream returns: its head as it was before the chunks were read, then the chunks. */
export interface StreamRead extends StreamHead {
  chunks: StreamChunk[];
}

/**
 * A store's kept streams (`agent-session/ai`'s `resumableStreams`): at most one per session, its chunks in order.
 * A stream id is the writer's: a call naming a stream the session no longer has (replaced, dropped, expired) does
 * nothing, so a late writer never writes into its successor.
 */
export interface StreamStore {
  /** Starts `streamId` as the session's stream, dropping the session's earlier stream and its chunks. */
  start(sessionId: string, streamId: string, now: number): Promise<void>;
  /** Appends chunks (consecutive `seq`s) and sets `updatedAt`; false when the stream is gone or no longer live. */
  append(sessionId: string, streamId: string, chunks: readonly StreamChunk[], now: number): Promise<boolean>;
  /** Ends a live stream: `done`, or `failed` with `error`. */
  end(sessionId: string, streamId: string, error: string | null, now: number): Promise<void>;
  /** The session's stream, or null. */
  head(sessionId: string): Promise<StreamHead | null>;
  /** The head of `streamId` and at most `limit` of its chunks after `afterSeq`, in order; null when it is gone. */
  read(sessionId: string, streamId: string, afterSeq: number, limit: number): Promise<StreamRead | null>;
  /** Drops a stream and its chunks. */
  drop(sessionId: string, streamId: string): Promise<void>;
  /** Drops every stream not written since `before` (ms) with its chunks; returns how many. */
  expire(before: number): Promise<number>;
  /** Number of chunks kept, in all streams (what a test or a health check reads). */
  countChunks(): Promise<number>;
}

/** A store that keeps streaming answers' chunks in a {@link StreamStore} (memory, SQLite and Postgres). */
export interface StreamCapableStore extends SessionStore {
  readonly streams: StreamStore;
}

/** True when the store has a {@link StreamStore}. */
export function hasStreamStore(store: SessionStore): store is StreamCapableStore {
  const streams = (store as Partial<StreamCapableStore>).streams;
  return typeof streams === "object" && streams !== null && typeof streams.append === "function";
}
