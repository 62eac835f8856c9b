import { SessionError } from "../../errors.js";
import { within } from "../../runtime/deadline.js";
import { emitWarning } from "../../runtime/warn.js";
import type { ChangeFeed } from "../../store/feed/feed.js";
import {
  backfillOptions,
  type ChannelOptions,
  DEFAULT_EMBED_TIMEOUT_MS,
  DEFAULT_QUERY_EMBED_TIMEOUT_MS,
  nearestRead,
  timeout,
} from "./config.js";
import { type EmbedFn, embedFunction, embedText, textHash } from "./embed.js";
import { embedFactRows } from "./fact-embed.js";
import type { FactVectorSource } from "./fact-vectors.js";
import { embedIsolated, refusalReason } from "./isolate.js";
import type {
  BackfillOptions,
  NearestMessage,
  NearestOptions,
  PendingText,
  RowsOutcome,
  VectorBackend,
  VectorChannel,
  VectorStatus,
  VectorWrite,
} from "./types.js";
import { VectorWorker } from "./worker.js";

export { vectorOptions } from "./config.js";

/** Refusals listed by status() (the newest; `failed` counts them all). */
const LISTED_FAILURES = 10;
/** Query vectors kept (a search's message and fact channels embed its query once). */
const QUERY_VECTORS = 8;

/**
 * The vector channel of one store: embeds what the backend reports pending (live, through the {@link VectorWorker},
 * or all at once in {@link backfill}) and answers {@link nearest} from the backend's index.
 */
export class StoreVectors implements VectorChannel {
  private readonly embed: EmbedFn;
  private readonly onError: (error: unknown) => void;
  private readonly worker: VectorWorker;
  /** Aborts every embedder call in flight when the store closes (a search's, a backfill's). */
  private readonly closing = new AbortController();
  private readonly queryTimeout: number;
  private readonly batchTimeout: number;
  /** The store's `embedDimensions`, what the size checked goes back to on reset(). */
  private readonly configured: number | undefined;
  private expected: number | undefined;
  private lastError: string | undefined;
  private ensured: Promise<void> | undefined;
  private closed = false;
  /** The store's facts, when it has any (facts in the vector channel: fact-vectors.ts). */
  private facts: FactVectorSource | undefined;
  /** The newest queries' vectors (undefined: the embedder failed, reported once). */
  private readonly queries = new Map<string, Promise<Float32Array | undefined>>();

  constructor(
    private readonly backend: VectorBackend,
    options: ChannelOptions,
    feed: ChangeFeed,
  ) {
    this.embed = embedFunction(options.embedder);
    this.queryTimeout = timeout(options, "queryEmbedTimeoutMs", DEFAULT_QUERY_EMBED_TIMEOUT_MS);
    this.batchTimeout = timeout(options, "embedTimeoutMs", DEFAULT_EMBED_TIMEOUT_MS);
    this.configured = options.embedDimensions;
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
    const read = nearestRead(options);
    if (typeof query !== "string" || query.trim() === "" || read === null) return [];
    await this.ready();
    if ((await this.backend.dimensions()) === null) return [];
    const vector = await this.queryVector(query);
    return vector === undefined ? [] : this.backend.nearest(vector, read);
  }

  /**
   * @internal the unit vector of a search's query, or undefined when the embedder failed (reported: the search
   * answers from its other channels). The newest queries' are kept, so the message and fact channels embed once.
   */
  queryVector(query: string): Promise<Float32Array | undefined> {
    this.assertOpen();
    const kept = this.queries.get(query);
    if (kept !== undefined) {
      this.queries.delete(query);
      this.queries.set(query, kept);
      return kept;
    }
    const vector = this.embedChecked([embedText(query)], this.queryTimeout, true).then(
      ([first]) => first,
      (error: unknown) => {
        this.queries.delete(query);
        // close() released the search: the store is gone, not the embedder.
        this.assertOpen();
        this.report(error);
        return undefined;
      },
    );
    this.queries.set(query, vector);
    if (this.queries.size > QUERY_VECTORS) this.queries.delete(this.queries.keys().next().value as string);
    return vector;
  }

  /** @internal gives the channel the store's facts: their vectors are kept current (this store's and others'). */
  attachFacts(
    facts: FactVectorSource & {
      onStored: ((sessions: readonly string[]) => void | Promise<void>) | undefined;
    },
  ): void {
    this.facts = facts;
    facts.onStored = () => this.worker.noteFacts();
    this.worker.followFacts();
  }

  /** @internal embeds the facts without a vector (fact-embed.ts): how many; throws what stopped a batch. */
  async embedFacts(signal: AbortSignal | undefined, awaited: boolean): Promise<number> {
    if (this.facts === undefined) return 0;
    return embedFactRows(
      this.facts,
      {
        embed: (part) => this.embedChecked(part, this.batchTimeout, awaited, signal),
        check: () => this.assertOpen(),
        report: (error) => this.report(error),
      },
      signal,
    );
  }

  async nearestMessages(query: string, options: NearestOptions): Promise<NearestMessage[]> {
    const seqs = await this.nearest(query, options);
    if (seqs.length === 0) return [];
    const ids = await this.backend.messageIds(seqs);
    return seqs.flatMap((seq) => {
      const found = ids.get(seq);
      return found === undefined ? [] : [{ ...found, seq }];
    });
  }

  async backfill(options: BackfillOptions = {}): Promise<{ embedded: number; failed: number }> {
    this.assertOpen();
    const { batchSize, onProgress, signal, retryFailed } = backfillOptions(options);
    await this.ready();
    // Vectors a delete left behind (one made before deletes took them, or a process killed before its prune) go.
    await this.backend.prune();
    if (retryFailed) await this.backend.clearFailures();
    if (retryFailed) await this.facts?.retryRefused();
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
      let outcome: RowsOutcome;
      try {
        outcome = await this.embedRows(rows, signal, true);
      } catch (error) {
        // A write that failed (or a check) left the whole batch pending.
        outcome = { embedded: 0, refused: 0, left: rows.length, error };
      }
      embedded += outcome.embedded;
      failed += outcome.refused + outcome.left;
      if (outcome.error !== undefined) {
        if (signal?.aborted) throw signal.reason;
        this.assertOpen();
        this.report(outcome.error);
      }
      done += rows.length;
      onProgress?.(done, Math.max(total, done));
    }
    // The facts without a vector (those learned before the store had an embedder, or by another process).
    try {
      await this.embedFacts(signal, true);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      this.assertOpen();
      this.report(error);
    }
    return { embedded, failed };
  }

  async status(): Promise<VectorStatus> {
    this.assertOpen();
    await this.ready();
    const { embedded, pending, failed } = await this.backend.counts();
    const status: VectorStatus = { embedded, pending };
    if (failed > 0) {
      status.failed = failed;
      status.failures = await this.backend.failures(LISTED_FAILURES);
    }
    // Present once the store holds facts (as `failed` once a text was refused): a status without them reads as before.
    const facts = await this.facts?.vectorCounts();
    if (facts !== undefined && facts.embedded + facts.pending + facts.failed > 0) status.facts = facts;
    if (this.lastError !== undefined) status.lastError = this.lastError;
    return status;
  }

  async reset(): Promise<void> {
    this.assertOpen();
    // A creation in flight finishes first, so it cannot re-create what the reset drops (its failure is its caller's).
    await this.ensured?.catch(() => undefined);
    this.ensured = undefined;
    await this.backend.reset();
    await this.facts?.forgetVectors();
    this.queries.clear();
    this.expected = this.configured;
    this.lastError = undefined;
  }

  /**
   * @internal stops the background work (the store closes): waits for a write in progress, abandons embedder calls
   * (the worker's, a backfill's, a search's, which then rejects with CLOSED).
   */
  close(): Promise<void> {
    this.closed = true;
    this.closing.abort(new SessionError("CLOSED", "This store was closed"));
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
   * @internal embeds the rows whose text changed since their stored vector and writes what was decided: vectors,
   * and a refusal for a text the embedder refused by itself (isolate.ts). Rows left pending come with the error;
   * throws what a write threw, and CLOSED or the signal's reason once either stopped the work. `awaited`: a caller
   * waits (backfill), so the calls' deadlines keep the process alive.
   */
  async embedRows(
    rows: readonly PendingText[],
    signal: AbortSignal | undefined,
    awaited: boolean,
  ): Promise<RowsOutcome> {
    const writes: VectorWrite[] = [];
    const texts: string[] = [];
    const embedAt: number[] = [];
    for (const row of rows) {
      const text = embedText(row.text);
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
    const isolated = await embedIsolated(texts, (part) =>
      this.embedChecked(part, this.batchTimeout, awaited, signal),
    );
    const left = new Set<number>();
    embedAt.forEach((at, i) => {
      const write = writes[at] as VectorWrite;
      const vector = isolated.vectors[i];
      if (vector) write.vector = vector;
      else if (isolated.refused.has(i)) write.failure = refusalReason(isolated.refused.get(i));
      else left.add(at);
    });
    signal?.throwIfAborted();
    this.assertOpen();
    const decided = writes.filter((_, at) => !left.has(at));
    // A reset() since the rows were read dropped the tables: they are made again for the vectors written here.
    await this.ready();
    if (decided.length > 0) await this.backend.write(decided);
    for (const [i, error] of isolated.refused) {
      const seq = (writes[embedAt[i] as number] as VectorWrite).seq;
      this.report(
        new Error(`the embedder refused the text of message row ${seq}: ${refusalReason(error)}`, {
          cause: error,
        }),
      );
    }
    const outcome: RowsOutcome = {
      embedded: decided.length - isolated.refused.size,
      refused: isolated.refused.size,
      left: left.size,
    };
    if (isolated.stopped !== undefined) outcome.error = isolated.stopped;
    return outcome;
  }

  // One embedder call within `ms` (and abandoned when the store closes or `signal` aborts: nobody waits for an
  // embedder that never answers), its vectors checked against the store's size (the option, else the stored ones).
  private async embedChecked(
    texts: string[],
    ms: number,
    awaited: boolean,
    signal?: AbortSignal,
  ): Promise<Float32Array[]> {
    const vectors = await within(ms, [this.closing.signal, signal], awaited, "embedder", (abortSignal) =>
      this.embed(texts, abortSignal),
    );
    this.expected ??= (await this.backend.dimensions()) ?? undefined;
    const size = (vectors[0] as Float32Array).length;
    if (this.expected !== undefined && size !== this.expected) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `the embedder returned vectors of ${size} dimensions, the store's are ${this.expected}`,
        { issues: [{ path: "embedder", rule: "conflict" }] },
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
