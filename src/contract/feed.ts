// Optional store capability: the change feed, the one event shape every backend, watcher and replay produces.
import type { SessionMessage, StoredCompaction } from "./message.js";

interface EventBase {
  /** The session written to. */
  sessionId: string;
  /**
   * Position in the store's change log (resume with `subscribe(listener, { after: cursor })`), or null on a store
   * that keeps no log (memory, or a store opened without `changeLog`).
   */
  cursor: number | null;
  /** "local" when this process wrote it, "remote" when another process (or connection) did. */
  origin: "local" | "remote";
}

/** One durable write, delivered after it committed (see docs/FEED.md). */
export type ChangeEvent =
  | (EventBase & {
      type: "append";
      /** The stored message (the first content when `inserted` is false). */
      message: SessionMessage;
      /** The parent when it is known (given by the writer, or read from the log); undefined: after the latest leaf. */
      parentId?: string | null;
      inserted: boolean;
    })
  | (EventBase & { type: "update"; message: SessionMessage })
  | (EventBase & { type: "delete"; ids: string[] })
  | (EventBase & { type: "clear" })
  /** The session was erased (manager.erase / eraseOwner, a retention sweep): forget everything of it. Ids only. */
  | (EventBase & { type: "erased" })
  | (EventBase & { type: "compaction"; compaction: StoredCompaction })
  | (EventBase & { type: "import"; message: SessionMessage; inserted: boolean })
  | (EventBase & {
      type: "reset";
      /**
       * Re-read the session: events were lost (log retention passed, a queue overflowed), a bulk import rewrote
       * it, or another process without a change log wrote to it (seen from the SQLite file's data version).
       */
      reason: string;
      /** True when any session may have changed (`sessionId` is then `""`): re-read everything you show. */
      wholeStore?: boolean;
    });

/** Receives change events in commit order; a returned promise is awaited before the next event. */
export type ChangeListener = (event: ChangeEvent) => void | Promise<void>;

/** Options of `subscribe()`. */
export interface SubscribeOptions {
  /** Only events of this session. */
  sessionId?: string;
  /** Replays the change log after this cursor first (needs a store with a change log). */
  after?: number;
  /** Unsubscribes when aborted. */
  signal?: AbortSignal;
  /**
   * Receives what a listener threw or rejected with; the write that caused the event has committed and is not
   * affected. Default: a process warning (`console.warn` in a Worker).
   */
  onError?: (error: unknown, event: ChangeEvent) => void;
  /**
   * Called once (never before `subscribe()` returns) when every write committed from then on will be delivered,
   * other processes' included: read what you show after this, and no write falls between the read and the events.
   * Also called after an early unsubscribe, so awaiting it cannot hang.
   */
  onReady?: () => void;
}

/** Unsubscribes; calling it again does nothing. */
export type Unsubscribe = () => void;

/** A store that delivers change events. */
export interface FeedCapableStore {
  subscribe(listener: ChangeListener, options?: SubscribeOptions): Unsubscribe;
}

/** True when the store offers `subscribe()`. */
export function hasFeed(store: object): store is FeedCapableStore {
  return typeof (store as Partial<FeedCapableStore>).subscribe === "function";
}
