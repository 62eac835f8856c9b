import { assertOwnBlockKeys } from "../context/block-keys.js";
import type { ToolOutputLimits } from "../context/output.js";
import type { SessionToolSet } from "../context/tools.js";
import type { SessionContextOptions, WritableContextProvider } from "../context/types.js";
import type { CompactionDetails, SessionMessage, StoredCompaction } from "../contract/message.js";
import type { RegistryCapableStore, SessionInfo } from "../contract/registry.js";
import type { SearchResult } from "../contract/search.js";
import { SessionError } from "../errors.js";
import { assertId } from "../message/ids.js";
import { optionsArg } from "../options-arg.js";
import { configOf, type SessionTemplate } from "../session/config.js";
import type { Session } from "../session/session.js";
import type { SqliteOptions } from "../sqlite/connection/open.js";
import type { ErasureReceipt } from "../store/erasure.js";
import { type RetentionPolicy, type SweepOptions, type SweepReport, sweep } from "../store/retention.js";
import { storePolicy } from "../store/write-policy.js";

import { eraseOne, eraseOwnerOf, eraseSessionOf } from "./erase.js";
import {
  assertName,
  type CacheUsage,
  type CreateSessionOptions,
  listOptions,
  newRecord,
  usageDelta,
} from "./input.js";
import { continueSession, forkSession } from "./lineage.js";
import { appendChain } from "./messages.js";
import { OwnerView } from "./owner-view.js";
import { type ManagerSearchOptions, searchSessions, sessionTools } from "./search.js";
import type { SearchToolOptions } from "./search-tools.js";
import {
  blockKeys,
  builderOf,
  found,
  type ManagerSource,
  type ManagerState,
  openManagerState,
  requireSession,
  retireSession,
  sessionOf,
} from "./state.js";
import type {
  ManagerCompactAfterOptions,
  ManagerCompactFunction,
  ManagerCompactionErrorHandler,
  ManagerTemplates,
} from "./templates.js";

export { continuationText } from "./lineage.js";
export type { OwnerUsage, OwnerView } from "./owner-view.js";
export type { ManagerSearchOptions } from "./search.js";
export type { ManagerSource } from "./state.js";

/**
 * Many named conversations in one store: their lifecycle, messages, forks, usage and cross-session search, on
 * every backend with a session registry. Every method naming a session fails with `NOT_FOUND` for an unregistered
 * id, except `get` (null), `getSession` (synchronous) and `delete` (idempotent). `M` types every session's
 * messages as the app's own (`SessionManager.create<MyUIMessage>(store)`; a typed view, as on `Session`).
 */
export class SessionManager<M extends SessionMessage = SessionMessage> {
  /** The store every managed session lives in. */
  readonly store: RegistryCapableStore;
  private readonly state: ManagerState<M>;

  constructor(source: ManagerSource, options: SqliteOptions = {}) {
    this.state = openManagerState<M>(source, options);
    this.store = this.state.store;
  }

  /** Creates a manager on a store, a SQLite path, a database handle or a `sql`-tag object (an Agent). */
  static create<M extends SessionMessage = SessionMessage>(
    source: ManagerSource,
    options: SqliteOptions = {},
  ): SessionManager<M> {
    return new SessionManager<M>(source, options);
  }

  /**
   * Changes a behaviour template (compaction, tool-output limits), validated once by `set`, and hands it to every
   * session handed out.
   */
  private behaviour(set: (templates: ManagerTemplates) => SessionTemplate): this {
    const template = set(this.state.templates);
    for (const session of this.state.sessions.values()) configOf(session).adopt(template);
    return this;
  }

  /** Adds a context block to every session; without a provider it is stored per session (`<label>_<sessionId>`). */
  withContext(label: string, options?: SessionContextOptions | null): this {
    builderOf(this.state, "withContext").addBlock(label, optionsArg(options, "withContext"));
    return this;
  }

  /** Persists every session's frozen prompt (under `_system_prompt_<sessionId>` when no provider is given). */
  withCachedPrompt(provider?: WritableContextProvider): this {
    builderOf(this.state, "withCachedPrompt").setCachedPrompt(provider);
    return this;
  }

  /** Registers the compaction function of every session (at any time, also for sessions already in use). */
  onCompaction(fn: ManagerCompactFunction): this {
    return this.behaviour((t) => t.setCompaction(fn));
  }

  /** Auto-compacts every session above `threshold` estimated tokens (`tokenCounter` as on Session); at any time. */
  compactAfter(threshold: number, given?: ManagerCompactAfterOptions | null): this {
    const options = optionsArg(given, "compactAfter");
    return this.behaviour((t) => t.setThreshold(threshold, options));
  }

  /** Receives failures of automatic compaction in any managed session; at any time. */
  onCompactionError(handler: ManagerCompactionErrorHandler): this {
    return this.behaviour((t) => t.setErrorHandler(handler));
  }

  /**
   * Bounds what the memory tools of every session and `session_search` return (`maxHitChars` per hit,
   * `maxOutputChars` per result; defaults 8,000 and 32,000), with a marker saying how to see the rest; at any
   * time (it changes what tools return, not what is stored).
   */
  withToolOutputLimits(limits: Partial<ToolOutputLimits>): this {
    return this.behaviour((t) => t.setToolOutput(limits));
  }

  /** Adds a read-only block `label` to every session through which the model searches all sessions. */
  withSearchableHistory(label: string): this {
    builderOf(this.state, "withSearchableHistory").setHistoryLabel(label);
    return this;
  }

  /**
   * The Session for an id, built on first access with every template and then cached. It does not check the
   * registry (it is synchronous); the manager's own methods do.
   */
  getSession(sessionId: string): Session<M> {
    return sessionOf(this.state, sessionId, (query, options) => this.search(query, options));
  }

  // The Session of a registered id (`NOT_FOUND` for any other), for the methods that delegate to it.
  private async registered(sessionId: string): Promise<Session<M>> {
    await requireSession(this.state, sessionId);
    return this.getSession(sessionId);
  }

  /**
   * The sessions of one owner (a user, a tenant): lists, gets, opens, searches, tools, forks, usage and export
   * cover only sessions registered with `owner`; another owner's (or an unowned) session id is `NOT_FOUND` there.
   * `create` in the view registers the session with the owner. The manager itself stays unscoped (operators).
   */
  forOwner(owner: string): OwnerView<M> {
    return new OwnerView<M>(this, this.state, owner);
  }

  /** Closes the store when the manager opened it itself (a SQLite path). */
  async close(): Promise<void> {
    this.state.sessions.clear();
    if (this.state.ownsStore) await this.store.close();
  }

  /** Registers a session (UUID id unless `options.id` is given) with zero usage; see assertOwnBlockKeys for ids. */
  async create(name: string, options?: CreateSessionOptions): Promise<SessionInfo> {
    const record = newRecord(name, options, () => crypto.randomUUID());
    assertOwnBlockKeys(this.state.templates.autoWiredLabels(), record.id); // else its Session refuses every call
    return this.store.registry.create(record);
  }

  /** The registered row, or null. */
  async get(sessionId: string): Promise<SessionInfo | null> {
    assertId(sessionId, "A session id");
    return this.store.registry.get(sessionId);
  }

  /**
   * Sessions, newest activity first (`updated_at` descending, then most recent write); `limit`/`offset` page,
   * `owner` keeps to one owner's sessions.
   */
  async list(options?: { limit?: number; offset?: number; owner?: string }): Promise<SessionInfo[]> {
    return this.store.registry.list(listOptions(options));
  }

  /** Renames a session (bumps its activity time). */
  async rename(sessionId: string, name: string): Promise<SessionInfo> {
    assertId(sessionId, "A session id");
    assertName(name);
    return found(sessionId, await this.store.registry.rename(sessionId, name));
  }

  /**
   * Removes everything of a session: messages, overlays, search-index rows, its auto-wired context blocks and
   * cached prompt, and its registry row. True when it was registered; deleting twice is not an error. A Session
   * of it obtained before (and its tools) is closed: later calls and writes fail with `CLOSED`.
   */
  async delete(sessionId: string): Promise<boolean> {
    assertId(sessionId, "A session id");
    // The keys come from the cached Session's blocks, so before it is retired (closed, its writes turned off).
    const keys = blockKeys(this.state, sessionId);
    await retireSession(this.state, sessionId);
    return this.store.registry.delete(sessionId, { blockKeys: keys });
  }

  /**
   * Erases a session with everything of it (messages, overlays, search rows, vectors, its blocks, entries and
   * cached prompt, usage, change-log rows, payloads no one else links) in one transaction, announces `erased` on
   * the feed and answers the receipt; `NOT_FOUND` when nothing is stored under the id (docs/PRIVACY.md).
   */
  async erase(sessionId: string): Promise<ErasureReceipt> {
    return eraseSessionOf(this.state, sessionId);
  }

  /** Erases every session of `owner` (one transaction each; run again after a crash); `NOT_FOUND` when it has none. */
  async eraseOwner(owner: string): Promise<ErasureReceipt> {
    return eraseOwnerOf(this.state, owner);
  }

  /** Pins a session (a retention sweep never erases it) or unpins it; `NOT_FOUND` for an unknown id. */
  async pin(sessionId: string, pinned = true): Promise<SessionInfo> {
    assertId(sessionId, "A session id");
    const registry = this.store.registry;
    if (typeof registry.pin !== "function") {
      throw new SessionError("UNSUPPORTED", `The ${this.store.backend} store's registry cannot pin`);
    }
    return found(sessionId, await registry.pin(sessionId, pinned));
  }

  /**
   * Applies a retention policy: erases every unpinned session inactive for longer than `maxAgeMs` (keeping each
   * owner's `keepNewestPerOwner` newest), in batches; safe to run from many processes at once (docs/PRIVACY.md).
   */
  async sweep(policy: RetentionPolicy, options?: SweepOptions): Promise<SweepReport> {
    return sweep(
      this.store.registry,
      (id, condition) => eraseOne(this.state, id, condition),
      policy,
      options,
    );
  }

  /** Appends a message (after the latest leaf, under `parentId`, or as a new root with `null`); returns its id. */
  async append(sessionId: string, message: M, parentId?: string | null): Promise<string> {
    await (await this.registered(sessionId)).appendMessage(message, parentId);
    return message.id;
  }

  /** Updates the message when its id exists in the session, else appends it; returns its id. */
  async upsert(sessionId: string, message: M, parentId?: string | null): Promise<string> {
    await (await this.registered(sessionId)).upsertMessage(message, parentId);
    return message.id;
  }

  /**
   * Appends messages as a chain, each under the previous one. The first goes under `parentId`, or after the
   * latest leaf when it is omitted (the active branch continues), or becomes a new root with `null`. Returns the
   * last id (`parentId ?? null` for an empty list). Every message is checked before anything is written (what
   * an append would refuse under the store's policy or the cap of this id's Session, and an id given twice:
   * `INVALID_ARGUMENT`).
   */
  async appendAll(sessionId: string, messages: M[], parentId?: string | null): Promise<string | null> {
    await requireSession(this.state, sessionId);
    const cached = this.state.sessions.get(sessionId);
    return appendChain(() => this.getSession(sessionId), cached, messages, parentId, storePolicy(this.store));
  }

  /** The path to `leafId` (default: the latest leaf) with overlays applied. */
  async getHistory(sessionId: string, leafId?: string | null): Promise<M[]> {
    return (await this.registered(sessionId)).getHistory(leafId);
  }

  /** Number of stored messages on the active path. */
  async getMessageCount(sessionId: string): Promise<number> {
    return (await this.registered(sessionId)).getPathLength();
  }

  /** Removes every message and overlay of the session (the registry row, usage and blocks stay). */
  async clearMessages(sessionId: string): Promise<void> {
    await (await this.registered(sessionId)).clearMessages();
  }

  /** Deletes messages; their children are spliced onto their parents. */
  async deleteMessages(sessionId: string, messageIds: string[]): Promise<void> {
    await (await this.registered(sessionId)).deleteMessages(messageIds);
  }

  /** The children of a message, oldest first. */
  async getBranches(sessionId: string, messageId: string): Promise<M[]> {
    return (await this.registered(sessionId)).getBranches(messageId);
  }

  /**
   * A new session holding the history up to `atMessageId` (overlays applied, fresh ids, one linear chain) and
   * copies of the source's auto-wired context blocks; `parent_session_id` is the source, usage starts at zero.
   * `NOT_FOUND` when the message is not in the source; nothing is left behind when copying fails.
   */
  async fork(sessionId: string, atMessageId: string, name: string): Promise<SessionInfo> {
    return forkSession(this.state, () => this.getSession(sessionId), sessionId, atMessageId, name);
  }

  /**
   * Ends a session (`end_reason = "compaction"`) and starts a continuation — named `name` or the old name, same
   * model and source, the old session as parent — whose history is one assistant message carrying `summary`.
   * The continuation gets copies of the old session's auto-wired context blocks, so its memory carries over.
   */
  async compactAndSplit(sessionId: string, summary: string, name?: string): Promise<SessionInfo> {
    return continueSession(this.state, sessionId, summary, name);
  }

  /** Stores a compaction overlay replacing `fromId`..`toId` when history is read. */
  async addCompaction(
    sessionId: string,
    summary: string,
    fromId: string,
    toId: string,
    details?: CompactionDetails,
  ): Promise<StoredCompaction> {
    return (await this.registered(sessionId)).addCompaction(summary, fromId, toId, details);
  }

  /** Every overlay of the session, oldest first. */
  async getCompactions(sessionId: string): Promise<StoredCompaction[]> {
    return (await this.registered(sessionId)).getCompactions();
  }

  /**
   * Adds to the session's usage counters (token counts whole numbers >= 0, cost >= 0) and returns the row. A
   * forked or continued session starts its own counters at zero.
   */
  async addUsage(
    sessionId: string,
    inputTokens: number,
    outputTokens: number,
    cost: number,
    cache?: CacheUsage,
  ): Promise<SessionInfo> {
    assertId(sessionId, "A session id");
    const usage = usageDelta(inputTokens, outputTokens, cost, cache);
    return found(sessionId, await this.store.registry.addUsage(sessionId, usage));
  }

  /**
   * Ranked recall across sessions (or the ones the options name), as `Session.search`; every hit carries
   * `sessionId`, `createdAt` and `onActivePath`. Covers every session the store holds.
   */
  async search(query: string, options?: ManagerSearchOptions | null): Promise<SearchResult[]> {
    return searchSessions(this.state, query, optionsArg(options, "search"));
  }

  /**
   * The model's cross-session tool: `{ session_search }`, its result within the manager's tool-output limits
   * (`limits` overrides them for this tool set); `options.context` shows the turns around each hit.
   */
  tools(limits?: Partial<ToolOutputLimits>, options?: SearchToolOptions): SessionToolSet {
    return sessionTools(this.state, limits, (query, search) => this.search(query, search), options);
  }
}
