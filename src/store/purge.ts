/** One step a purge ran: what it was, on what, how long it took, and what it found. */
export interface PurgeStep {
  /** What ran, e.g. `"PRAGMA wal_checkpoint(TRUNCATE)"` or `"VACUUM FULL"`. */
  action: string;
  /** The table or index it ran on, when it ran on one. */
  target?: string;
  /** Milliseconds the step took. */
  ms: number;
  /** What the step left undone, when it could not finish (a busy checkpoint, a lock not granted). */
  incomplete?: string;
}

/** What `store.purge()` did: the steps in order, their total time, and whether every step finished. */
export interface PurgeReport {
  /** The store's backend: "memory", "sqlite" or "postgres". */
  backend: string;
  /** True when every step finished, so nothing deleted before the purge began is left in the store's files. */
  complete: boolean;
  /** The steps, in the order they ran. */
  steps: PurgeStep[];
  /** Milliseconds the whole purge took. */
  ms: number;
}

/** Options of `store.purge()`. */
export interface PurgeOptions {
  /**
   * Postgres only: the longest a step waits for its table's lock before it gives up on that table (the report is
   * then incomplete), so a purge never queues appends behind it for longer (default 2000); in `"vacuum"` mode the
   * longest a concurrent reindex waits for older transactions (on Citus, the longest the whole reindex runs); also
   * the longest it tries to rewrite `pg_statistic` while the catalog is locked, and the longest it waits, before it
   * starts and before that rewrite, for transactions older than itself (or its `ANALYZE`) to end (the report names
   * those still open).
   */
  lockTimeoutMs?: number;
}

/** A store that can make the bytes of what was deleted unreadable in its files (docs/PRIVACY.md). */
export interface PurgeCapableStore {
  /** Makes every deleted or erased byte unreadable in the store's files; safe to run from many processes at once. */
  purge(options?: PurgeOptions): Promise<PurgeReport>;
}

/** Collects a purge's steps and times them. */
export class PurgeRecorder {
  private readonly started = performance.now();
  readonly steps: PurgeStep[] = [];

  constructor(private readonly backend: string) {}

  /** Runs `step`, timed; it returns what it left undone, if anything. */
  async run(
    action: string,
    target: string | undefined,
    step: () => Promise<string | undefined> | string | undefined,
  ): Promise<void> {
    const start = performance.now();
    this.record(action, target, start, await step());
  }

  /** Runs `step` (synchronous), timed; it returns what it left undone, if anything. */
  runSync(action: string, target: string | undefined, step: () => string | undefined): void {
    const start = performance.now();
    this.record(action, target, start, step());
  }

  private record(action: string, target: string | undefined, start: number, incomplete: string | undefined) {
    const done: PurgeStep = { action, ms: Math.round((performance.now() - start) * 10) / 10 };
    if (target !== undefined) done.target = target;
    if (incomplete !== undefined) done.incomplete = incomplete;
    this.steps.push(done);
  }

  /** The report of the steps run so far. */
  report(): PurgeReport {
    return {
      backend: this.backend,
      complete: this.steps.every((s) => s.incomplete === undefined),
      steps: this.steps,
      ms: Math.round((performance.now() - this.started) * 10) / 10,
    };
  }
}
