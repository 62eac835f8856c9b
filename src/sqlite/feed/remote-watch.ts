import type { ChangeEvent } from "../../contract/feed.js";
import { emitWarning } from "../../runtime/warn.js";
import type { SqliteChangeLog } from "../../sql/change-log/sqlite.js";
import type { SqlDriver } from "../../sql/engines/sqlite/driver.js";
import type { Interest, RemoteWatch, RunningWatch } from "../../store/feed/remote.js";
import { dataVersion, isFileDatabase, SqliteWatermark } from "./watermark.js";

/** How often a store without a change log looks at the file's data version (as the change log's default). */
export const DEFAULT_POLL_MS = 200;

/**
 * Hears other processes' writes to a SQLite file while somebody subscribes, one timer per store: the change
 * log's rows (full events with cursors) when the store keeps one, and `PRAGMA data_version` for writers that
 * keep none (a `reset` per changed session). A commit whose log row has not arrived yet waits one tick before it
 * counts as unlogged (the row is a second statement after the write). Any other connection's commit may have stored
 * facts (they log no row here): `facts` is told whenever the data version moved, and its listener (the vector
 * worker) reads the facts waiting for a vector, an indexed read bounded by its work.
 */
export class SqliteRemoteWatch implements RemoteWatch {
  constructor(
    private readonly driver: SqlDriver,
    private readonly log: SqliteChangeLog | undefined,
    private readonly pollMs: number,
  ) {}

  watch(deliver: (event: ChangeEvent) => void, interest: () => Interest, facts: () => void): RunningWatch {
    // The starting point is read here, inside subscribe(): ready at once.
    const ready = Promise.resolve();
    const version = isFileDatabase(this.driver) ? dataVersion(this.driver) : undefined;
    // Nothing to hear: an in-memory database without a log has no other writers.
    if (version === undefined && !this.log) return { ready, follow: () => undefined, stop: () => undefined };
    const watermark = version === undefined ? undefined : new SqliteWatermark(this.driver, version);
    watermark?.follow(interest());
    // Shared with deliverAfter, which moves it row by row: a tick that fails midway keeps what it delivered.
    const position = { cursor: this.log?.head() ?? 0 };
    /** Unlogged resets held for one tick when the store keeps a log (their row may still come). */
    let pending: ChangeEvent[] = [];
    let busy = false;
    const tick = async () => {
      const explained = new Set<string>();
      if (this.log) await this.log.deliverAfter(position, deliver, explained);
      if (!watermark) return;
      const wanted = interest();
      const seen = watermark.seen;
      const fresh = watermark.poll(wanted, explained);
      watermark.follow(wanted);
      if (watermark.seen !== seen) facts();
      if (!this.log) {
        for (const event of fresh) deliver(event);
        return;
      }
      for (const event of pending) {
        const logged =
          event.type === "reset" && event.wholeStore ? explained.size > 0 : explained.has(event.sessionId);
        if (!logged) deliver(event);
      }
      pending = fresh;
    };
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      tick()
        // A closed store stops its watcher first; anything else is worth hearing about, once per tick.
        .catch((error: unknown) => emitWarning(error, "AgentSessionFeedWarning"))
        .finally(() => {
          busy = false;
        });
    }, this.pollMs);
    // A subscription must not keep a process alive on its own (the app's own work does).
    timer.unref?.();
    return {
      ready,
      // The log's cursor covers every session; the watermark snapshots a newly named session's head now.
      follow: () => watermark?.follow(interest()),
      wrote: (sessionId) => watermark?.wrote(sessionId),
      stop: () => clearInterval(timer),
    };
  }
}
