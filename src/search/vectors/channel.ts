import { SessionError } from "../../errors.js";
import { describe } from "../../message/describe.js";
import { emitWarning } from "../../runtime/warn.js";
import type { ChangeFeed } from "../../store/feed/feed.js";
import { MAX_SEARCH_LIMIT } from "../../store/limits.js";
import { MAX_SEARCH_SESSIONS, searchFilters } from "../options.js";
import { assertEmbedder, type EmbedFn, embedFunction, textHash } from "./embed.js";
import type {
  BackfillOptions,
  Embedder,
  NearestOptions,
  NearestScope,
  PendingText,
  VectorBackend,
  VectorChannel,
  VectorStatus,
  VectorStoreOptions,
  VectorWrite,
} from "./types.js";
import { VectorWorker } from "./worker.js";

/** Texts per embedder call when the caller names no batch size. */
export const DEFAULT_EMBED_BATCH = 64;
/**
 * Characters of a message embedded (the rest is left out): embedding models take a few thousand tokens, and one
 * text over the model's limit would fail its whole batch on every retry.
 */
export const MAX_EMBED_CHARS = 8_000;

/**
 * The vector channel of one store: embeds what the backend reports pending (live, through the {@link VectorWorker},
 * or all at once in {@link backfill}) and answers {@link nearest} from the backend's index.
 */
export class StoreVectors implements VectorChannel {
  private readonly embed: EmbedFn;
  private readonly onError: (error: unknown) => void;
  private readonly worker: VectorWorker;
  private expected: number | undefined;
  private lastError: string | undefined;
  private ensured: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly backend: VectorBackend,
    options: VectorStoreOptions & { embedder: Embedder },
    feed: ChangeFeed,
  ) {
    this.embed = embedFunction(options.embedder);
    this.expected = options.embedDimensions;
    const onError = options.onEmbedError;
    this.onError =
      typeof onError === "function" ? onError : (error) => emitWarning(error, "AgentSessionVectorWarning");
    this.worker = new VectorWorker(this, backend, feed);
  }

  /**
   * Which index holds the vectors: "sqlite-vec", "pgvector", "sqlite-blob", "postgres-array" or "memory" (settled by
   * the channel's first call: before it, the plain index of the backend).
   */
  get index(): string {
    return this.backend.kind;
  }

  async nearest(query: string, options: NearestOptions): Promise<number[]> {
    this.assertOpen();
    if (typeof options !== "object" || options === null) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "nearest(): options { limit, sessionId?, sessionIds?, role?, since?, until?, branch? } are required",
      );
    }
    const limit = options.limit;
    if (!Number.isSafeInteger(limit) || limit < 0 || limit > MAX_SEARCH_LIMIT) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `nearest(): limit must be a whole number from 0 to ${MAX_SEARCH_LIMIT}, got ${describe(limit)}`,
      );
    }
    const scope = nearestScope(options);
    const filters = searchFilters(options, "nearest():");
    const activePath = nearestBranch(options);
    if (typeof query !== "string" || query.trim() === "" || limit === 0 || scope === null) return [];
    await this.ready();
    if ((await this.backend.dimensions()) === null) return [];
    let vector: Float32Array;
    try {
      vector = (await this.embedChecked([query.slice(0, MAX_EMBED_CHARS)]))[0] as Float32Array;
    } catch (error) {
      this.report(error);
      return [];
    }
    return this.backend.nearest(vector, { ...scope, ...filters, limit, activePath });
  }

  async backfill(options: BackfillOptions = {}): Promise<{ embedded: number; failed: number }> {
    this.assertOpen();
    const batchSize = options.batchSize ?? DEFAULT_EMBED_BATCH;
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) {
      throw new SessionError("INVALID_ARGUMENT", "backfill(): batchSize must be a whole number >= 1");
    }
    const { onProgress, signal } = options;
    await this.ready();
    // Vectors a delete left behind (one made before deletes took them, or a process killed before its prune) go.
    await this.backend.prune();
    const total = (await this.backend.counts()).pending;
    let after = 0;
    let done = 0;
    let embedded = 0;
    let failed = 0;
    onProgress?.(0, total);
    for (;;) {
      signal?.throwIfAborted();
      this.assertOpen();
      const rows = await this.backend.pending(after, batchSize);
      if (rows.length === 0) break;
      after = (rows[rows.length - 1] as PendingText).seq;
      try {
        await this.embedRows(rows, signal);
        embedded += rows.length;
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        this.report(error);
        failed += rows.length;
      }
      done += rows.length;
      onProgress?.(done, Math.max(total, done));
    }
    return { embedded, failed };
  }

  async status(): Promise<VectorStatus> {
    this.assertOpen();
    await this.ready();
    const counts = await this.backend.counts();
    return this.lastError === undefined ? counts : { ...counts, lastError: this.lastError };
  }

  /** @internal stops the background work (the store closes): waits for a write in progress, abandons an embedder call. */
  close(): Promise<void> {
    this.closed = true;
    return this.worker.close();
  }

  // The store refuses calls after close() with CLOSED; so does its channel.
  private assertOpen(): void {
    if (this.closed) throw new SessionError("CLOSED", "This store was closed");
  }

  /** @internal resolves once the background work has nothing queued or running (tests; the CLI before exiting). */
  idle(): Promise<void> {
    return this.worker.idle();
  }

  /** @internal the tables exist (created on the channel's first use, never by a store without an embedder). */
  ready(): Promise<void> {
    if (!this.ensured) {
      const ensured = this.backend.ensure();
      this.ensured = ensured;
      ensured.catch(() => {
        if (this.ensured === ensured) this.ensured = undefined;
      });
    }
    return this.ensured;
  }

  /**
   * @internal embeds the rows whose text changed since their stored vector (one embedder call) and writes them
   * all; throws what the embedder or the write threw.
   */
  async embedRows(rows: readonly PendingText[], signal?: AbortSignal): Promise<void> {
    const writes: VectorWrite[] = [];
    const texts: string[] = [];
    const embedAt: number[] = [];
    for (const row of rows) {
      const text = row.text.slice(0, MAX_EMBED_CHARS);
      const hash = textHash(text);
      const write: VectorWrite = {
        seq: row.seq,
        session: row.session,
        contentHash: row.contentHash,
        textHash: hash,
        text: row.text,
        vector: null,
      };
      if (text.trim() !== "") {
        if (hash === row.storedTextHash) write.vector = "keep";
        else {
          embedAt.push(writes.length);
          texts.push(text);
        }
      }
      writes.push(write);
    }
    if (texts.length > 0) {
      const vectors = await this.embedChecked(texts, signal);
      embedAt.forEach((at, i) => {
        (writes[at] as VectorWrite).vector = vectors[i] as Float32Array;
      });
    }
    signal?.throwIfAborted();
    await this.backend.write(writes);
  }

  // One embedder call, its vectors checked against the store's size (the option, else the stored vectors'), and
  // abandoned when `signal` aborts (close() must not wait for an embedder that never answers).
  private async embedChecked(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const vectors = await abandonable(this.embed(texts, signal), signal);
    this.expected ??= (await this.backend.dimensions()) ?? undefined;
    const size = (vectors[0] as Float32Array).length;
    if (this.expected !== undefined && size !== this.expected) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `the embedder returned vectors of ${size} dimensions, the store's are ${this.expected}`,
      );
    }
    this.expected = size;
    this.lastError = undefined;
    return vectors;
  }

  /** @internal reports a failure of embedding or of the background work (the writes are not affected). */
  report(error: unknown): void {
    this.lastError = error instanceof Error ? error.message : String(error);
    try {
      this.onError(error);
    } catch (handlerError) {
      emitWarning(handlerError, "AgentSessionVectorWarning");
    }
  }
}

/**
 * The vector options of a store, checked (INVALID_ARGUMENT at construction rather than a failure later), or
 * undefined when there is no embedder: the store then has no channel.
 */
export function vectorOptions(
  options: VectorStoreOptions,
): (VectorStoreOptions & { embedder: Embedder }) | undefined {
  const { embedder, embedDimensions, onEmbedError, vectorIndex } = options;
  if (embedder === undefined) return undefined;
  assertEmbedder(embedder, embedDimensions);
  if (onEmbedError !== undefined && typeof onEmbedError !== "function") {
    throw new SessionError("INVALID_ARGUMENT", "onEmbedError must be a function");
  }
  if (vectorIndex !== undefined && vectorIndex !== "auto" && vectorIndex !== "plain") {
    throw new SessionError("INVALID_ARGUMENT", 'vectorIndex must be "auto" or "plain"');
  }
  return { ...options, embedder };
}

function abandonable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/** Whether nearest() keeps to the active paths, checked (`INVALID_ARGUMENT`). */
function nearestBranch({ branch }: NearestOptions): boolean {
  if (branch !== undefined && branch !== "active" && branch !== "all") {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `nearest(): branch must be "active" or "all", got ${describe(branch)}`,
    );
  }
  return branch === "active";
}

/** The sessions nearest() keeps to, checked (`INVALID_ARGUMENT`); null when the options leave none to search. */
function nearestScope({ sessionId, sessionIds }: NearestOptions): NearestScope | null {
  if (sessionId !== undefined && typeof sessionId !== "string") {
    throw new SessionError("INVALID_ARGUMENT", "nearest(): sessionId must be a string");
  }
  if (sessionIds === undefined) return sessionId === undefined ? {} : { sessionId };
  if (
    !Array.isArray(sessionIds) ||
    sessionIds.length > MAX_SEARCH_SESSIONS ||
    sessionIds.some((id) => typeof id !== "string")
  ) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `nearest(): sessionIds must be an array of at most ${MAX_SEARCH_SESSIONS} session ids`,
    );
  }
  if (sessionId !== undefined) return sessionIds.includes(sessionId) ? { sessionId } : null;
  return sessionIds.length === 0 ? null : { sessionIds: [...new Set(sessionIds)] };
}
