// Recognising SQLite's "database is locked" answer, and waiting it out where SQLite's busy handler cannot.

/** True when `error` is SQLite's SQLITE_BUSY, raw from an engine or wrapped in a StorageError. */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : "";
  return code === "SQLITE_BUSY" || /database is locked|SQLITE_BUSY/i.test(message);
}

const MAX_PAUSE_MS = 50;

/**
 * Runs `attempt` until it stops answering busy or `timeoutMs` has passed, pausing 1, 2, 4 … 50 ms between tries.
 * For the statements that upgrade a read lock to a write lock, where SQLite answers busy at once instead of calling
 * its busy handler (waiting there could deadlock two upgrading connections).
 */
export function retryWhileBusy<T>(attempt: () => T, timeoutMs: number): T {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 1; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    try {
      return attempt();
    } catch (error) {
      const left = deadline - Date.now();
      if (!isBusy(error) || left <= 0) throw error;
      sleepSync(Math.min(pause, left));
    }
  }
}

// Opening storage is synchronous, so the pause blocks the thread; the lock holder is another process or thread.
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
