import type { ChangeEvent } from "../../contract/feed.js";
import { backoffMs } from "../../runtime/deadline.js";
import { BackgroundLoop } from "../../store/feed/background.js";
import type { ChangeFeed } from "../../store/feed/feed.js";
import type { PendingText, RowsOutcome, VectorBackend } from "./types.js";

/** What the worker asks of the channel that owns it: readiness, embedding a batch, reporting a failure. */
export interface WorkerOwner {
  ready(): Promise<void>;
  embedRows(rows: readonly PendingText[], signal: AbortSignal, awaited: false): Promise<RowsOutcome>;
  embedFacts(signal: AbortSignal, awaited: false): Promise<number>;
  report(error: unknown): void;
}

/** Messages embedded per background batch. */
const BATCH = 64;
/** Queued message ids beyond this are dropped for one scan of everything after the start (bounded memory). */
const MAX_QUEUED = 50_000;
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 300_000;

/**
 * Keeps vectors current off the append path: it learns of appended, updated and deleted messages from the store's
 * change feed (a listener that only queues ids, so no write waits for it), and embeds them in batches in the
 * background. A failure is reported and the work retried with a growing delay (1 s to 5 min); writes the feed could
 * not describe (a `reset`: another process, a bulk import) cause one scan of the messages stored since the worker
 * started. Messages stored before that are {@link StoreVectors.backfill}'s.
 */
export class VectorWorker {
  private readonly ids = new Map<string, Set<string>>();
  private queued = 0;
  private readonly prunes = new Set<string | null>();
  private rescan = false;
  /** Facts were stored: the facts without a vector are embedded (fact-vectors.ts). */
  private facts = false;
  /** The newest seq when the worker started: a rescan covers the messages after it. */
  private horizon: Promise<number> | undefined;
  /** Failed passes in a row: the next retry waits 1 s doubled per failure, at most 5 min. */
  private failures = 0;
  private readonly loop: BackgroundLoop;
  private unfollow: (() => void) | undefined;

  constructor(
    private readonly channel: WorkerOwner,
    private readonly backend: VectorBackend,
    private readonly feed: ChangeFeed,
  ) {
    this.loop = new BackgroundLoop(feed, {
      note: (event) => this.note(event),
      pending: () => this.hasWork(),
      pass: (signal) => this.run(signal),
      report: (error) => channel.report(error),
      // The horizon is read before any queued work runs, so a rescan never covers less than what was queued.
      kicked: () => this.startHorizon(),
    });
  }

  private note(event: ChangeEvent): void {
    switch (event.type) {
      case "append":
      case "import":
        if (event.type === "append" || event.inserted) this.queue(event.sessionId, event.message.id);
        break;
      case "update":
        this.queue(event.sessionId, event.message.id);
        break;
      case "delete":
      case "clear":
      case "erased":
        this.prunes.add(event.sessionId);
        break;
      case "reset":
        this.prunes.add(event.wholeStore ? null : event.sessionId);
        this.rescan = true;
        break;
      default:
        return;
    }
    this.loop.kick();
  }

  /** Facts were stored (in this process): embeds them in the background, off the write's path. */
  noteFacts(): void {
    this.facts = true;
    this.loop.kick();
  }

  /**
   * Hears other processes' fact writes from the feed (a SQLite commit elsewhere, a Postgres "facts" log row): each
   * signal is one pass reading the facts waiting for a vector, an indexed read answering none when there are none.
   */
  followFacts(): void {
    this.unfollow ??= this.feed.onRemoteFacts(() => this.noteFacts());
  }

  private queue(sessionId: string, id: string): void {
    if (this.queued >= MAX_QUEUED) {
      this.ids.clear();
      this.queued = 0;
      this.rescan = true;
      return;
    }
    let ids = this.ids.get(sessionId);
    if (!ids) {
      ids = new Set();
      this.ids.set(sessionId, ids);
    }
    if (!ids.has(id)) {
      ids.add(id);
      this.queued++;
    }
  }

  private startHorizon(): void {
    if (this.horizon !== undefined) return;
    const horizon = this.channel.ready().then(() => this.backend.maxSeq());
    // A failure is work()'s to report when it runs; one started while a retry waits would meanwhile be unhandled,
    // and an unhandled rejection ends the app's process.
    horizon.catch(() => undefined);
    this.horizon = horizon;
  }

  private hasWork(): boolean {
    return this.queued > 0 || this.prunes.size > 0 || this.rescan || this.facts;
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!this.loop.closed && this.hasWork()) {
      const ids = [...this.ids];
      const prunes = [...this.prunes];
      const rescan = this.rescan;
      const facts = this.facts;
      this.facts = false;
      this.ids.clear();
      this.queued = 0;
      this.prunes.clear();
      this.rescan = false;
      this.startHorizon();
      try {
        await this.work(ids, prunes, rescan, signal);
        if (facts) await this.channel.embedFacts(signal, false);
        this.failures = 0;
      } catch (error) {
        if (this.loop.closed) return;
        this.channel.report(error);
        for (const [sessionId, set] of ids) for (const id of set) this.queue(sessionId, id);
        for (const prune of prunes) this.prunes.add(prune);
        this.rescan ||= rescan;
        this.facts ||= facts;
        this.failures++;
        this.loop.holdFor(backoffMs(FIRST_RETRY_MS, this.failures, MAX_RETRY_MS));
        return;
      }
    }
  }

  private async work(
    ids: readonly (readonly [string, Set<string>])[],
    prunes: readonly (string | null)[],
    rescan: boolean,
    signal: AbortSignal,
  ): Promise<void> {
    // A failed start (the server was down, sqlite-vec missing) is tried again with the retry, not kept.
    const horizon = await (this.horizon as Promise<number>).catch((error: unknown) => {
      this.horizon = undefined;
      throw error;
    });
    // The tables exist (again, after a reset()) before anything reads them.
    await this.channel.ready();
    if (prunes.includes(null)) await this.backend.prune();
    else for (const sessionId of prunes) if (sessionId !== null) await this.backend.prune(sessionId);
    for (const [sessionId, set] of ids) {
      const all = [...set];
      for (let i = 0; i < all.length; i += BATCH) {
        const rows = await this.backend.pendingIds(sessionId, all.slice(i, i + BATCH));
        if (rows.length > 0) await this.embed(rows, signal);
        signal.throwIfAborted();
      }
    }
    if (!rescan) return;
    for (let after = horizon; ; ) {
      const rows = await this.backend.pending(after, BATCH);
      if (rows.length === 0) break;
      await this.embed(rows, signal);
      after = (rows[rows.length - 1] as PendingText).seq;
    }
  }

  // A batch whose embedding stopped (the embedder down or too slow) is retried; refused texts were recorded.
  private async embed(rows: readonly PendingText[], signal: AbortSignal): Promise<void> {
    const outcome = await this.channel.embedRows(rows, signal, false);
    if (outcome.error !== undefined) throw outcome.error;
  }

  /** Resolves once nothing is queued or running (tests, and the CLI before it exits). */
  async idle(): Promise<void> {
    await this.loop.idle();
  }

  /** Stops listening, abandons an embedder call in flight and waits for a write in progress. */
  async close(): Promise<void> {
    this.unfollow?.();
    await this.loop.close(new Error("the store was closed"));
  }
}
