import { assertOwnBlockKeys } from "../context/block-keys.js";
import type { ToolOutputLimits } from "../context/output.js";
import type { SessionToolSet } from "../context/tools.js";
import type { CompactionDetails, SessionMessage, StoredCompaction } from "../contract/message.js";
import type { Siblings } from "../contract/provider.js";
import type { RegistryCapableStore, SessionInfo } from "../contract/registry.js";
import type { SearchHit, SearchItem, WithFactHits } from "../contract/search.js";
import type { LearnReport } from "../facts/learn.js";
import type { FactLearner, LearnerOptions } from "../facts/learner.js";
import { assertId } from "../message/ids.js";
import { optionsArg } from "../options-arg.js";
import type { Session } from "../session/session.js";
import type { SqliteOptions } from "../sql/engines/sqlite/open.js";
import type { ErasureReceipt } from "../store/erasure.js";
import type { RetentionPolicy, SweepOptions, SweepReport } from "../store/retention.js";
import { storePolicy } from "../store/write-policy.js";
import { deleteSessionOf, eraseOwnerOf, eraseSessionOf, pinSessionOf, sweepSessionsOf } from "./erase.js";
import { closeLearners, learnOf, type ManagerLearnOptions, startLearningOf } from "./facts.js";
import {
  type CacheUsage,
  type CreateSessionOptions,
  listOptions,
  newRecord,
  parseName,
  usageDelta,
} from "./input.js";
import { continueSession, forkSession } from "./lineage.js";
import { appendChain } from "./messages.js";
import { OwnerView } from "./owner-view.js";
import { type ManagerSearchOptions, searchSessions, sessionTools } from "./search.js";
import type { SearchToolOptions } from "./search-tools.js";
import { ManagerSettings } from "./settings.js";
import { found, type ManagerSource, openManagerState, requireSession, sessionOf } from "./state.js";

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
export class SessionManager<M extends SessionMessage = SessionMessage> extends ManagerSettings<M> {
  /** The store every managed session lives in. */
  readonly store: RegistryCapableStore;

  constructor(source: ManagerSource, options: SqliteOptions = {}) {
    super(openManagerState<M>(source, options));
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

  /** Stops the manager's background learners, then closes the store when the manager opened it (a SQLite path). */
  async close(): Promise<void> {
    await closeLearners(this.state);
    this.state.sessions.clear();
    if (this.state.ownsStore) await this.store.close();
  }

  /**
   * Learns facts from one session's (`NOT_FOUND` for an unregistered id) or one `{ owner }`'s sessions' messages
   * not learned yet, with `onProgress` and a report (`learnFacts`; docs/FACTS.md, "Doors"). `UNSUPPORTED` without facts.
   */
  async learn(target: string | { owner: string }, options: ManagerLearnOptions): Promise<LearnReport> {
    return learnOf(this.state, target, options);
  }

  /** Starts learning facts in the background from every session's new messages (`startLearning`); `close` stops it. */
  startLearning(options: LearnerOptions): FactLearner {
    return startLearningOf(this.state, options);
  }

  /** Registers a session (UUID id unless `options.id` is given) with zero usage; see assertOwnBlockKeys for ids. */
  async create(name: string, options?: CreateSessionOptions): Promise<SessionInfo> {
    const record = newRecord(name, options, () => crypto.randomUUID());
    assertOwnBlockKeys(this.state.templates.autoWiredLabels(), record.id); // else its Session refuses every call
    return this.store.registry.create(record);
  }

  /** The registered row, or null. */
  async get(sessionId: string): Promise<SessionInfo | null> {
    assertId(sessionId, "A session id", "sessionId");
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
    assertId(sessionId, "A session id", "sessionId");
    parseName(name);
    return found(sessionId, await this.store.registry.rename(sessionId, name));
  }

  /**
   * Removes everything of a session: messages, overlays, search-index rows, its auto-wired context blocks and
   * cached prompt, and its registry row. True when it was registered; deleting twice is not an error. A Session
   * of it obtained before (and its tools) is closed: later calls and writes fail with `CLOSED`.
   */
  async delete(sessionId: string): Promise<boolean> {
    return deleteSessionOf(this.state, sessionId);
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
    return pinSessionOf(this.state, sessionId, pinned);
  }

  /**
   * Applies a retention policy: erases every unpinned session inactive for longer than `maxAgeMs` (keeping each
   * owner's `keepNewestPerOwner` newest), in batches; safe to run from many processes at once (docs/PRIVACY.md).
   */
  async sweep(policy: RetentionPolicy, options?: SweepOptions): Promise<SweepReport> {
    return sweepSessionsOf(this.state, policy, options);
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

  /** The children of a message, oldest first (e.g. an original and a regenerated answer). */
  async getBranches(sessionId: string, messageId: string): Promise<M[]> {
    return (await this.registered(sessionId)).getBranches(messageId);
  }

  /** The message among its siblings for a branch switcher, as `Session.getSiblings`; null when it is not stored. */
  async getSiblings(sessionId: string, messageId: string): Promise<Siblings<M> | null> {
    return (await this.registered(sessionId)).getSiblings(messageId);
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
    assertId(sessionId, "A session id", "sessionId");
    const usage = usageDelta(inputTokens, outputTokens, cost, cache);
    return found(sessionId, await this.store.registry.addUsage(sessionId, usage));
  }

  /**
   * Ranked recall across sessions (or the ones the options name), as `Session.search`: exact hits in `rank` order,
   * each with its `sessionId`, `createdAt`, `score` and `onActivePath`. Covers every session the store holds.
   */
  search(query: string, options: WithFactHits<ManagerSearchOptions>): Promise<SearchItem[]>;
  search(query: string, options?: ManagerSearchOptions | null): Promise<SearchHit[]>;
  async search(
    query: string,
    options?: ManagerSearchOptions | WithFactHits<ManagerSearchOptions> | null,
  ): Promise<SearchItem[]> {
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
