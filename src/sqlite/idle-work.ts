import { emitWarning } from "../runtime/warn.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import { hasPending, indexPendingIfWritable } from "../sql/search/sqlite-indexing.js";

/** Pending messages worth an idle indexing batch: ~30 µs a row at 32, against ~190 µs for a batch of one. */
export const IDLE_INDEX_MIN = 32;

/** Write transactions (~5 WAL pages each) between idle checkpoints: about SQLite's own 1,000 pages. */
export const IDLE_CHECKPOINT_WRITES = 200;

/** Writes between idle passes: a pass costs a timer and a read, not worth paying after every append. */
export const WRITES_PER_PASS = 16;

/**
 * Work an append would otherwise pay for, done once the caller yields to the event loop (an agent awaiting its
 * model): the search index's batch and the WAL checkpoint. An append then pays neither, where one in 128 paid a
 * 3–5 ms batch and one in ~200 a checkpoint. Nothing here is needed for correctness: an append still indexes the
 * batch itself at `INDEX_BATCH` pending rows and SQLite still checkpoints at `wal_autocheckpoint` pages, so a
 * caller that never yields (a bulk loop) keeps today's behaviour, and searches index what is pending first.
 *
 * Should idle work fail, it stops for this store and reports the error once as a process warning (nobody awaits
 * it); nothing is lost, since the same work runs again on the append path, which throws its errors.
 */
export class IdleWork {
  private writes = 0;
  private sincePass = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(private readonly driver: SqlDriver) {
    // A Durable Object checkpoints and schedules by itself; a read-only handle has nothing to do.
    if (!driver.configurable || typeof setTimeout !== "function") this.stopped = true;
  }

  /** After a write transaction committed: schedules the idle pass every few writes (at most one at a time). */
  noteWrite(): void {
    this.writes++;
    if (++this.sincePass < WRITES_PER_PASS || this.stopped || this.timer !== undefined) return;
    this.sincePass = 0;
    const timer = setTimeout(() => this.run(), 0);
    (timer as { unref?: () => void }).unref?.();
    this.timer = timer;
  }

  private run(): void {
    this.timer = undefined;
    try {
      if (hasPending(this.driver, IDLE_INDEX_MIN)) indexPendingIfWritable(this.driver);
      if (this.writes >= IDLE_CHECKPOINT_WRITES) {
        this.writes = 0;
        // PASSIVE takes no lock and waits for nobody: it copies what readers allow and leaves the rest.
        this.driver.get("PRAGMA wal_checkpoint(PASSIVE)");
      }
    } catch (error) {
      this.stopped = true;
      emitWarning(error, "AgentSessionIdleWorkWarning");
    }
  }

  /** Cancels a scheduled pass (the store is closing). */
  close(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
