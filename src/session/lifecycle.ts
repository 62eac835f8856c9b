import { type ChangeListener, hasFeed, type SubscribeOptions, type Unsubscribe } from "../contract/feed.js";
import type { SessionMessage } from "../contract/message.js";
import type { SessionProvider } from "../contract/provider.js";
import type { SessionBinding, SessionStore } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { writerFor } from "../store/foreign-provider.js";
import type { StoreProvider } from "../store/provider.js";
import { Compactor } from "./compaction.js";
import type { SessionConfig } from "./config.js";
import { SessionContext } from "./context.js";
import type { ResolvedSource } from "./source.js";

/** What a Session works through once it is in use. */
export interface SessionParts<M extends SessionMessage = SessionMessage> {
  provider: SessionProvider<M>;
  /** What the Session's message writes go through: `provider` when it was made for this Session, else adapted. */
  writer: StoreProvider;
  store: SessionStore<M> | undefined;
  context: SessionContext;
  compactor: Compactor;
}

/**
 * A Session's life: resolved lazily on the first awaited call (storage bound to the session id, every context
 * block loaded), closed once. Until the first call the configuration may still change what is stored where;
 * after `close()` every call fails with `CLOSED`.
 */
export class SessionLifecycle<M extends SessionMessage = SessionMessage> {
  /** Gives back storage the session opened itself (a SQLite path: a reference on the path's shared store). */
  release: (() => Promise<void>) | undefined;
  private initialising: Promise<SessionParts<M>> | undefined;
  private resolvedParts: SessionParts<M> | undefined;
  private closed = false;
  // How this Session binds the provider it writes through: its policy, read at each write (it may change).
  private readonly binding: SessionBinding = { policy: () => this.config.policy };

  constructor(
    private readonly source: ResolvedSource<M>,
    private readonly config: SessionConfig,
  ) {}

  /** The parts, once resolved (undefined before the first awaited call has finished). */
  get resolved(): SessionParts<M> | undefined {
    return this.resolvedParts;
  }

  /** True from the first awaited call on. */
  get started(): boolean {
    return this.initialising !== undefined;
  }

  /**
   * Refuses a builder call that would change which rows the session reads or how its context is stored once the
   * session is in use; `instead` names what to do. Settings that only change behaviour (compaction, row limits)
   * are not checked: they may change at any time, as in the reference.
   */
  assertConfigurable(method: string, instead: string): void {
    if (this.started) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `${method}() must be called before the session is first used (it decides what is stored where): ${instead}`,
        { issues: [{ path: method, rule: "conflict" }] },
      );
    }
  }

  /**
   * The parts, resolving them on the first call (`CLOSED` after `close()`). A failed attempt (a provider's `get()`
   * or the skill restore's read hit a transient error) rejects the calls waiting on it and is then forgotten, so
   * the next call tries again instead of the Session failing for the rest of its life.
   */
  parts(): Promise<SessionParts<M>> {
    if (this.closed) return Promise.reject(this.closedError());
    if (this.resolvedParts) return Promise.resolve(this.resolvedParts);
    if (!this.initialising) {
      const initialising = this.open().then((parts) => {
        this.resolvedParts = parts;
        return parts;
      });
      this.initialising = initialising;
      initialising.catch(() => {
        if (this.initialising === initialising) this.initialising = undefined;
      });
    }
    return this.initialising;
  }

  private async open(): Promise<SessionParts<M>> {
    const { context: setup, compaction, sessionId } = this.config;
    if (this.source.kind === "provider") {
      if (sessionId !== "") {
        throw new SessionError(
          "INVALID_ARGUMENT",
          "forSession() needs a store; a SessionProvider is already bound to one session",
          { issues: [{ path: "forSession", rule: "conflict" }] },
        );
      }
      const provider = this.source.provider;
      const context = await SessionContext.open(setup, provider, undefined, "", () => this.assertOpen());
      const writer = writerFor(provider, this.binding);
      return {
        provider,
        writer,
        store: undefined,
        context,
        compactor: new Compactor(compaction, provider, context),
      };
    }
    const store = this.source.store;
    // Made for this Session alone, its writes apply the Session's policy: a message is prepared once.
    const provider = store.session(sessionId, this.binding);
    const writer = writerFor(provider, this.binding);
    const context = await SessionContext.open(setup, provider, store, sessionId, () => this.assertOpen());
    return { provider, writer, store, context, compactor: new Compactor(compaction, provider, context) };
  }

  /**
   * `Session.removeContext`: from the loaded context once resolved, else from the configuration; refused while
   * the context is being opened (it would be lost or half-applied).
   */
  removeContext(label: string): boolean {
    if (this.resolvedParts) return this.resolvedParts.context.remove(label);
    if (this.started) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "removeContext() cannot run while the session is initialising",
        { issues: [{ path: "removeContext", rule: "conflict" }] },
      );
    }
    return this.config.removeBlock(label);
  }

  /** Subscribes to the store's change feed for this session (`UNSUPPORTED` on a bare provider). */
  subscribe(listener: ChangeListener, options: Omit<SubscribeOptions, "sessionId">): Unsubscribe {
    this.assertOpen();
    const store = this.source.kind === "store" ? this.source.store : undefined;
    if (!store || !hasFeed(store)) {
      throw new SessionError(
        "UNSUPPORTED",
        "subscribe() needs a Session on a store (memory, SQLite, Postgres); a bare SessionProvider has no change feed",
      );
    }
    return store.subscribe(listener, { ...options, sessionId: this.config.sessionId });
  }

  /** Marks the session closed and gives back storage it opened itself; a second call does nothing. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const release = this.release;
    this.release = undefined;
    if (release) await release();
  }

  /** Throws `CLOSED` once close() was called (a tool set handed out before still holds the parts). */
  assertOpen(): void {
    if (this.closed) throw this.closedError();
  }

  private closedError(): SessionError {
    return new SessionError("CLOSED", `Session "${this.config.sessionId}" was closed`);
  }
}
