import type { StreamStore } from "../contract/streams.js";

/**
 * Wakes the readers of a session's kept stream when a writer of this process wrote to it, so a reader in the same
 * process follows at once; a reader in another process is not woken and looks again after its poll interval.
 */
export class StreamWake {
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Resolves when `sessionId` is written to in this process, or after `ms`. */
  wait(sessionId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiting.get(sessionId);
      if (!set) {
        set = new Set();
        this.waiting.set(sessionId, set);
      }
      const waiters = set;
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiting.get(sessionId) === waiters) this.waiting.delete(sessionId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
    });
  }

  /** Wakes every reader waiting on `sessionId`. */
  wake(sessionId: string): void {
    for (const done of [...(this.waiting.get(sessionId) ?? [])]) done();
  }
}

// One per stream store object, so every resumableStreams() over the same store wakes the same readers.
const wakes = new WeakMap<StreamStore, StreamWake>();

/** The wake-up of the readers of `store`'s kept streams in this process. */
export function wakeOf(store: StreamStore): StreamWake {
  let wake = wakes.get(store);
  if (!wake) {
    wake = new StreamWake();
    wakes.set(store, wake);
  }
  return wake;
}
