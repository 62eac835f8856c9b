import type { SessionContextOptions, WritableContextProvider } from "../context/types.js";
import { assertContextOptions, assertLabel, isWritableProvider } from "../context/types.js";
import { SessionError } from "../errors.js";
import { assertSessionId } from "../message.js";
import { type ChangeListener, hasFeed, type SubscribeOptions, type Unsubscribe } from "../store/feed.js";
import type { SessionStore } from "../store/types.js";
import { assertByteCap, OPEN_POLICY, type WritePolicy, writePolicy } from "../store/write-policy.js";
import type {
  AppendOptions,
  CompactionDetails,
  HistoryReadOptions,
  HistoryRowStat,
  ImportMessageOptions,
  RecentHistoryResult,
  SearchOptions,
  SearchResult,
  SessionMessage,
  SessionProvider,
  StoredCompaction,
  UpsertOptions,
} from "../types.js";
import { type CompactionSetup, Compactor } from "./compaction.js";
import { type ContextSetup, SessionContext } from "./context.js";
import {
  historyBatchesOf,
  historyOf,
  type RecentHistoryOptions,
  recentArguments,
  wholePath,
} from "./history.js";
import { type MessagesChangedListener, notifyChanged } from "./hooks.js";
import { type ResolvedSource, resolveSource, type SessionSource } from "./source.js";
import {
  appendThrough,
  importThrough,
  type SessionAppendResult,
  type SessionUpdateResult,
  type SessionUpsertResult,
  updateThrough,
  upsertThrough,
} from "./writes.js";

export type { RecentHistoryOptions } from "./history.js";
export type { SessionOptions } from "./options.js";

import type { SessionOptions } from "./options.js";

interface SessionState<M extends SessionMessage = SessionMessage> {
  provider: SessionProvider<M>;
  store: SessionStore<M> | undefined;
  context: SessionContext;
  compactor: Compactor;
}

/**
 * Construction, lazy initialisation and the history API of a {@link Session} (split out to keep files small;
 * use `Session`, not this class). `M` is the app's message type reads are typed as (see `Session`).
 */
export class SessionBase<M extends SessionMessage = SessionMessage> {
  private readonly source: ResolvedSource<M>;
  private sessionIdValue: string;
  /** Gives back storage this session opened itself (a SQLite path: a reference on the path's shared store). */
  protected releaseStore: (() => Promise<void>) | undefined;
  protected initialising: Promise<SessionState<M>> | undefined;
  protected resolved: SessionState<M> | undefined;
  private recentHistoryWarned = false;
  protected contextSetup: ContextSetup = { blocks: [], promptStore: undefined };
  protected compactionSetup: CompactionSetup = {};
  protected policy: WritePolicy = OPEN_POLICY;
  /** The reference's `internal_onMessagesChanged` listener. */
  protected messagesChanged: MessagesChangedListener | undefined;

  /** Wraps a SessionStore (blocks without a provider are stored with it) or a SessionProvider (no auto-wiring). */
  constructor(provider: SessionProvider | SessionStore, options: SessionOptions = {}) {
    // The typed view: stores hold any valid message; reads are `M` because the app writes only `M`s.
    this.source = resolveSource(provider as SessionSource) as ResolvedSource<M>;
    this.sessionIdValue = options.sessionId ?? "";
    assertSessionId(this.sessionIdValue);
    for (const { label, ...rest } of options.context ?? []) this.withContext(label, rest);
    if (options.promptStore) this.withCachedPrompt(options.promptStore);
    if (options.tokenCounter) this.compactionSetup.tokenCounter = options.tokenCounter;
    if (options.onCompactionError) this.compactionSetup.onError = options.onCompactionError;
    this.policy = writePolicy({
      ...(options.reservedMetadataKeys ? { reservedMetadataKeys: options.reservedMetadataKeys } : {}),
    });
    const cap = options.maxMessageBytes ?? options.maxRowBytes;
    if (cap !== undefined) this.setMessageLimit(cap);
  }

  protected setMessageLimit(maxBytes: number): void {
    assertByteCap(maxBytes, "maxMessageBytes");
    this.policy = { ...this.policy, maxMessageBytes: maxBytes };
  }

  private closedValue = false;

  /** The id this session is namespaced by (`""` = the default session). */
  get sessionId(): string {
    return this.sessionIdValue;
  }

  /**
   * Refuses a builder call that would change which rows the session reads or how its context is stored once the
   * session is in use; `instead` names what to do. Settings that only change behaviour (compaction, row limits)
   * are not checked: they may change at any time, as in the reference.
   */
  protected assertConfigurable(method: string, instead: string): void {
    if (this.initialising) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `${method}() must be called before the session is first used (it decides what is stored where): ${instead}`,
      );
    }
  }

  /** Namespaces this session's rows by id (required for several sessions in one store). */
  forSession(sessionId: string): this {
    this.assertConfigurable(
      "forSession",
      "a Session is one conversation. Keep one store per process (const store = new SqliteStore(path)) and " +
        "create a Session per conversation or request: Session.create(store).forSession(id), or use " +
        "SessionManager.getSession(id)",
    );
    assertSessionId(sessionId);
    this.sessionIdValue = sessionId;
    return this;
  }

  /**
   * Adds a context block. Without a provider it is a writable block stored with the session (when the storage
   * can hold blocks) or an empty read-only block.
   */
  withContext(label: string, options: SessionContextOptions = {}): this {
    this.assertConfigurable("withContext", "use addContext(label, options) on a session in use");
    assertLabel(label);
    assertContextOptions(options);
    if (this.contextSetup.blocks.some((b) => b.label === label)) {
      throw new SessionError("INVALID_ARGUMENT", `Block "${label}" already exists`);
    }
    this.contextSetup.blocks.push({ label, ...options });
    return this;
  }

  /** Persists the frozen system prompt (with the session's storage when no provider is given). */
  withCachedPrompt(provider?: WritableContextProvider): this {
    this.assertConfigurable(
      "withCachedPrompt",
      "create a new Session with withCachedPrompt() before its first call",
    );
    if (provider !== undefined && !isWritableProvider(provider)) {
      throw new SessionError("INVALID_ARGUMENT", "withCachedPrompt needs a provider with get() and set()");
    }
    this.contextSetup.promptStore = provider ?? null;
    return this;
  }

  /** Resolves storage and loads every context block; every async method awaits this first. */
  async ready(): Promise<void> {
    await this.state();
  }

  protected state(): Promise<SessionState<M>> {
    if (this.closedValue) {
      return Promise.reject(new SessionError("CLOSED", `Session "${this.sessionIdValue}" was closed`));
    }
    if (this.resolved) return Promise.resolve(this.resolved);
    this.initialising ??= this.initialise().then((state) => {
      this.resolved = state;
      return state;
    });
    return this.initialising;
  }

  protected async initialise(): Promise<SessionState<M>> {
    if (this.source.kind === "provider") {
      if (this.sessionIdValue !== "") {
        throw new SessionError(
          "INVALID_ARGUMENT",
          "forSession() needs a store; a SessionProvider is already bound to one session",
        );
      }
      const provider = this.source.provider;
      const context = await SessionContext.open(this.contextSetup, provider, undefined, "");
      return {
        provider,
        store: undefined,
        context,
        compactor: new Compactor(this.compactionSetup, provider, context),
      };
    }
    const store = this.source.store;
    const provider = store.session(this.sessionIdValue);
    const context = await SessionContext.open(this.contextSetup, provider, store, this.sessionIdValue);
    return { provider, store, context, compactor: new Compactor(this.compactionSetup, provider, context) };
  }

  /** The storage contract this session writes through. */
  async provider(): Promise<SessionProvider<M>> {
    return (await this.state()).provider;
  }

  /**
   * Calls `listener` after every durable write to this session — through this Session or any other writer of the
   * store, including other processes when the store keeps a change log (see docs/FEED.md).
   */
  subscribe(listener: ChangeListener, options: Omit<SubscribeOptions, "sessionId"> = {}): Unsubscribe {
    if (this.closedValue) throw new SessionError("CLOSED", `Session "${this.sessionIdValue}" was closed`);
    const store = this.source.kind === "store" ? this.source.store : undefined;
    if (!store || !hasFeed(store)) {
      throw new SessionError(
        "UNSUPPORTED",
        "subscribe() needs a Session on a store (memory, SQLite, Postgres); a bare SessionProvider has no change feed",
      );
    }
    return store.subscribe(listener, { ...options, sessionId: this.sessionIdValue });
  }

  /** Appends after the latest leaf, under `parentId` or as a new root (`null`); resolves the stored form. */
  async appendMessage(
    message: M,
    parentId?: string | null,
    options?: AppendOptions,
  ): Promise<SessionAppendResult<M>> {
    const { provider, compactor } = await this.state();
    const result = await appendThrough(provider, this.policy, message, parentId, options);
    // The reference's status frame follows every append, also of an id already stored.
    const estimate = await compactor.broadcastIdle();
    // The message is stored; compaction problems go to onCompactionError and never fail the append.
    const compacted = result.inserted && (await compactor.afterAppend(estimate));
    // The reference's hook: `append`, or `compact` instead when the append triggered a compaction.
    notifyChanged(
      this.messagesChanged,
      compacted
        ? { type: "compact" }
        : { type: "append", message: result.message, parentId, inserted: result.inserted },
    );
    return result;
  }

  /** Inserts the message, or replaces the stored one with its id in place (identical content writes nothing). */
  async upsertMessage(
    message: M,
    parentId?: string | null,
    options?: UpsertOptions,
  ): Promise<SessionUpsertResult<M>> {
    const { provider, compactor } = await this.state();
    const result = await upsertThrough(provider, this.policy, message, parentId, options);
    const estimate = await compactor.broadcastIdle();
    const compacted = result.inserted && (await compactor.afterAppend(estimate));
    if (compacted) notifyChanged(this.messagesChanged, { type: "compact" });
    else if (result.inserted) {
      notifyChanged(this.messagesChanged, {
        type: "append",
        message: result.message,
        parentId,
        inserted: true,
      });
    } else if (result.updated)
      notifyChanged(this.messagesChanged, { type: "update", message: result.message });
    return result;
  }

  /** Writes one historical message verbatim with its original time (migrations); a stored id is skipped. */
  async importMessage(message: M, options?: ImportMessageOptions): Promise<SessionAppendResult<M>> {
    const { provider } = await this.state();
    return importThrough(provider, this.policy, message, options);
  }

  /** Replaces a stored message by id (`NOT_FOUND` if unknown); identical content writes nothing. */
  async updateMessage(message: M): Promise<SessionUpdateResult<M>> {
    const { provider, compactor } = await this.state();
    const result = await updateThrough(provider, this.policy, message);
    await compactor.broadcastIdle();
    notifyChanged(this.messagesChanged, { type: "update", message: result.message });
    return result;
  }

  /**
   * The reference's maintenance write: replaces a stored message like `updateMessage`, without a status frame
   * or a compaction check (e.g. shrinking old media); the `internal_onMessagesChanged` hook still hears it.
   */
  async internal_rewriteMessage(message: M): Promise<SessionUpdateResult<M>> {
    const { provider } = await this.state();
    const result = await updateThrough(provider, this.policy, message);
    notifyChanged(this.messagesChanged, { type: "update", message: result.message });
    return result;
  }

  /** The reference's framework hook: `listener` hears this Session's own writes (null removes it). */
  internal_onMessagesChanged(listener: MessagesChangedListener | null): this {
    if (listener !== null && typeof listener !== "function") {
      throw new SessionError("INVALID_ARGUMENT", "internal_onMessagesChanged needs a function or null");
    }
    this.messagesChanged = listener ?? undefined;
    return this;
  }

  /** Deletes messages; their children are spliced onto their parents. */
  async deleteMessages(messageIds: string[]): Promise<void> {
    const { provider, compactor } = await this.state();
    await provider.deleteMessages(messageIds);
    await compactor.broadcastIdle();
    notifyChanged(this.messagesChanged, { type: "delete", messageIds: [...messageIds] });
  }

  /** Removes every message and overlay of this session, forgets loaded skills and re-renders the prompt. */
  async clearMessages(): Promise<void> {
    const { provider, context, compactor } = await this.state();
    await provider.clearMessages();
    context.skills.clear();
    await context.refresh();
    await compactor.broadcastIdle();
    notifyChanged(this.messagesChanged, { type: "clear" });
  }

  /** The path from the root to `leafId` (default: the latest leaf), with compaction overlays applied. */
  async getHistory(leafId?: string | null): Promise<M[]> {
    return (await this.state()).provider.getHistory(leafId);
  }

  /** One stored message (no overlay), or null. */
  async getMessage(id: string): Promise<M | null> {
    return (await this.state()).provider.getMessage(id);
  }

  /** The newest message without children, or null for an empty session. */
  async getLatestLeaf(): Promise<M | null> {
    return (await this.state()).provider.getLatestLeaf();
  }

  /** The children of a message, oldest first (e.g. an original and a regenerated answer). */
  async getBranches(messageId: string): Promise<M[]> {
    return (await this.state()).provider.getBranches(messageId);
  }

  /** Number of stored messages on the path to `leafId` (overlays not applied). */
  async getPathLength(leafId?: string | null): Promise<number> {
    return (await this.state()).provider.getPathLength(leafId);
  }

  /**
   * The newest messages of the active path (or `leafId`'s) whose bytes fit `maxContentBytes`, offloaded media
   * counted as it reads back; always the leaf, and at least `minRecentMessages` when given (the reference's form).
   */
  async getRecentHistory(
    maxContentBytes: number,
    minRecentMessages?: number | RecentHistoryOptions,
    leafId?: string | null,
  ): Promise<RecentHistoryResult<M>> {
    const { provider } = await this.state();
    const args = recentArguments(minRecentMessages, leafId);
    if (provider.getRecentHistory)
      return provider.getRecentHistory(args.leafId, maxContentBytes, args.minRecent);
    if (!this.recentHistoryWarned) {
      this.recentHistoryWarned = true;
      console.warn(
        "agent-session: this SessionProvider has no getRecentHistory; reading the whole path instead",
      );
    }
    return wholePath(provider, args.leafId);
  }

  /**
   * The active path (or `leafId`'s) one message at a time with overlays applied, read in bounded windows, so a
   * long session never sits in memory whole; `newestFirst` reads from the leaf, `signal` aborts.
   */
  async *history(options?: HistoryReadOptions): AsyncGenerator<M> {
    yield* historyOf((await this.state()).provider, options);
  }

  /** Like {@link history}, in arrays of at most `batchSize` messages and `maxBatchBytes` bytes. */
  async *historyBatches(options?: HistoryReadOptions): AsyncGenerator<M[]> {
    yield* historyBatchesOf((await this.state()).provider, options);
  }

  /** Per-row sizes of the path, or null when the provider cannot tell. */
  async getHistoryRowStats(leafId?: string | null): Promise<HistoryRowStat[] | null> {
    const { provider } = await this.state();
    return provider.getHistoryRowStats ? provider.getHistoryRowStats(leafId) : null;
  }

  /** Full-text search over this session's messages (every branch unless `branch: "active"`). */
  async search(query: string, options: SearchOptions = {}): Promise<SearchResult<M>[]> {
    const { provider } = await this.state();
    if (!provider.searchMessages) {
      throw new SessionError("UNSUPPORTED", "Session provider does not support search");
    }
    return provider.searchMessages(query, options.limit ?? 20, options);
  }

  /** Stores a compaction overlay that replaces `fromId`..`toId` when history is read. */
  async addCompaction(
    summary: string,
    fromId: string,
    toId: string,
    details?: CompactionDetails,
  ): Promise<StoredCompaction> {
    return (await this.state()).provider.addCompaction(summary, fromId, toId, details);
  }

  /** Every stored overlay of this session, oldest first (superseded ones included). */
  async getCompactions(): Promise<StoredCompaction[]> {
    return (await this.state()).provider.getCompactions();
  }

  /**
   * Gives back storage this session opened itself (a SQLite path given to `Session.create` shares one connection
   * per file, closed when its last Session closes); a store or handle you passed in stays open for others. Either
   * way every later call of this session fails with `CLOSED`.
   */
  async close(): Promise<void> {
    if (this.closedValue) return;
    this.closedValue = true;
    const release = this.releaseStore;
    this.releaseStore = undefined;
    if (release) await release();
  }
}
