import { z } from "zod";
import type { ChangeEvent, ChangeListener, SubscribeOptions, Unsubscribe } from "../../contract/feed.js";
import { SessionError } from "../../errors.js";
import { emitWarning } from "../../runtime/warn.js";
import { parseInput } from "../../schema/parse.js";
import { func, numberWhere } from "../../schema/rules.js";
import { rule } from "../../schema/to-session-error.js";
import type { Interest, LoggedChange, RemoteChanges, RemoteWatch, RunningWatch } from "./remote.js";

const listenerSchema = func("subscribe() needs a listener function");

/** A subscription's options: a cursor to resume after and a ready callback (a signal and a session id pass). */
const subscribeOptionsSchema = z.looseObject(
  {
    after: numberWhere(
      "subscribe(): after must be a cursor (a whole number >= 0)",
      (n) => Number.isSafeInteger(n) && n >= 0,
    ).optional(),
    onReady: func("subscribe(): onReady must be a function").optional(),
  },
  rule("subscribe() options must be an object"),
);

/** At most this many events wait for one slow listener; more and they are dropped for one `reset` event. */
export const MAX_QUEUED_EVENTS = 10_000;

class Subscriber {
  private queue: ChangeEvent[] = [];
  private draining = false;
  /** While a replay runs, live events wait here and the ones the replay covered are dropped. */
  private held: ChangeEvent[] | undefined;
  private replayedUpTo = Number.NEGATIVE_INFINITY;
  active = true;

  constructor(
    private readonly listener: ChangeListener,
    private readonly options: SubscribeOptions,
  ) {}

  get sessionId(): string | undefined {
    return this.options.sessionId;
  }

  accepts(event: ChangeEvent): boolean {
    const only = this.options.sessionId;
    return (
      only === undefined || event.sessionId === only || (event.type === "reset" && event.wholeStore === true)
    );
  }

  push(event: ChangeEvent): void {
    if (!this.active || !this.accepts(event)) return;
    if (this.held) {
      this.held.push(event);
      return;
    }
    if (event.cursor !== null && event.cursor <= this.replayedUpTo) return;
    if (this.queue.length >= MAX_QUEUED_EVENTS) {
      this.queue = [
        {
          type: "reset",
          reason: "queue overflow",
          sessionId: "",
          wholeStore: true,
          cursor: null,
          origin: "local",
        },
      ];
    } else {
      this.queue.push(event);
    }
    if (!this.draining) void this.drain();
  }

  async replay(source: AsyncIterable<ChangeEvent>): Promise<void> {
    this.held = [];
    let last = Number.NEGATIVE_INFINITY;
    try {
      for await (const event of source) {
        if (!this.active) return;
        if (event.cursor !== null) last = Math.max(last, event.cursor);
        if (this.accepts(event)) this.queue.push(event);
        if (!this.draining) void this.drain();
      }
    } catch (error) {
      this.fail(error, {
        type: "reset",
        reason: "replay failed",
        sessionId: "",
        wholeStore: true,
        cursor: null,
        origin: "local",
      });
    } finally {
      const held = this.held;
      this.held = undefined;
      this.replayedUpTo = last;
      for (const event of held) this.push(event);
    }
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      for (let event = this.queue.shift(); event && this.active; event = this.queue.shift()) {
        try {
          const result = this.listener(event);
          if (result && typeof (result as Promise<void>).then === "function") await result;
        } catch (error) {
          this.fail(error, event);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private fail(error: unknown, event: ChangeEvent): void {
    const onError = this.options.onError;
    if (onError) {
      try {
        onError(error, event);
        return;
      } catch (handlerError) {
        error = handlerError;
      }
    }
    emitWarning(error, "AgentSessionFeedWarning");
  }
}

/**
 * The in-process side of a store's change feed: subscribers with their own ordered queues (a slow or failing
 * listener never delays a write or another listener), plus an optional {@link RemoteChanges} for other processes.
 */
export class ChangeFeed {
  private readonly subscribers = new Set<Subscriber>();
  private running: RunningWatch | undefined;
  /** Told when another writer may have stored facts (the vector worker's; no subscriber event). */
  private readonly factListeners = new Set<() => void>();

  constructor(
    private readonly remote: () => RemoteChanges | undefined = () => undefined,
    /** What delivers other processes' writes while somebody listens. */
    private readonly watcher: () => RemoteWatch | undefined = () => undefined,
  ) {}

  /** The sessions subscribers currently want (read by a watcher on each poll). */
  interest(): Interest {
    const sessions = new Set<string>();
    let all = false;
    for (const subscriber of this.subscribers) {
      const only = subscriber.sessionId;
      if (only === undefined) all = true;
      else sessions.add(only);
    }
    return { sessions, all };
  }

  /** True when nobody listens: writes skip building events. */
  get idle(): boolean {
    return this.subscribers.size === 0;
  }

  /**
   * After a write committed: records it in the change log (when the store keeps one) and delivers the event that
   * `build` makes to local subscribers. A log failure is reported, never thrown: the write itself succeeded.
   * `logged` is the cursor of the row the write committed with itself (nothing is recorded then).
   */
  async publish(
    change: LoggedChange,
    build: (cursor: number | null) => ChangeEvent,
    logged?: number,
  ): Promise<void> {
    // Before anything that may fail: the watch must know this write was ours whatever happens to its log row.
    this.running?.wrote?.(change.sessionId);
    const log = this.remote();
    let cursor: number | null = logged ?? null;
    if (log && logged !== undefined) {
      try {
        await log.recorded?.(logged);
      } catch (error) {
        emitWarning(error, "AgentSessionFeedWarning");
      }
    } else if (log) {
      try {
        cursor = await log.record(change);
      } catch (error) {
        emitWarning(error, "AgentSessionFeedWarning", "a write committed but its change-log row failed");
      }
    }
    if (this.subscribers.size > 0) this.emit(build(cursor));
  }

  /** Delivers an event to every matching subscriber (called after the write committed). */
  emit(event: ChangeEvent): void {
    for (const subscriber of this.subscribers) subscriber.push(event);
  }

  /**
   * @internal calls `listener` when another process (or store instance) may have stored facts, while somebody
   * subscribes: a SQLite file's data version moved, or a Postgres change-log row of kind "facts" arrived. Internal,
   * no `ChangeEvent`: facts belong to an owner or a session, not to the session writes the feed describes.
   */
  onRemoteFacts(listener: () => void): () => void {
    this.factListeners.add(listener);
    return () => this.factListeners.delete(listener);
  }

  /** Adds a listener; see {@link SubscribeOptions}. */
  subscribe(listener: ChangeListener, options: SubscribeOptions = {}): Unsubscribe {
    parseInput(listenerSchema, listener, { path: "listener" });
    parseInput(subscribeOptionsSchema, options);
    const { after, signal, onReady } = options;
    const remote = this.remote();
    if (after !== undefined && !remote) {
      throw new SessionError(
        "UNSUPPORTED",
        "subscribe(): resuming from a cursor needs a store with a change log (SQLite or Postgres opened with changeLog: true)",
      );
    }
    if (signal?.aborted) return () => undefined;
    const subscriber = new Subscriber(listener, options);
    this.subscribers.add(subscriber);
    const watcher = this.watcher();
    if (watcher && !this.running) {
      this.running = watcher.watch(
        (event) => this.emit(event),
        () => this.interest(),
        () => {
          for (const listener of this.factListeners) listener();
        },
      );
    } else {
      // A session named for the first time gets its starting point now, not on the watch's next poll.
      this.running?.follow();
    }
    if (onReady) {
      (this.running?.ready ?? Promise.resolve())
        .then(() => onReady())
        .catch((error: unknown) => emitWarning(error, "AgentSessionFeedWarning"));
    }
    if (remote && after !== undefined) void subscriber.replay(remote.replay(after));
    const unsubscribe = () => {
      subscriber.active = false;
      this.subscribers.delete(subscriber);
      signal?.removeEventListener("abort", unsubscribe);
      if (this.subscribers.size === 0) this.stopWatching();
    };
    signal?.addEventListener("abort", unsubscribe, { once: true });
    return unsubscribe;
  }

  private stopWatching(): void {
    const running = this.running;
    this.running = undefined;
    running?.stop();
  }

  /** Drops every subscriber (the store closes). */
  close(): void {
    for (const subscriber of this.subscribers) subscriber.active = false;
    this.subscribers.clear();
    this.factListeners.clear();
    this.stopWatching();
  }
}
