import { type ToolOutputLimits, toolOutputLimits } from "../context/output.js";
import {
  type AnthropicToolDefinition,
  executeToolCall,
  type OpenAIResponsesToolDefinition,
  type OpenAIToolCall,
  type OpenAIToolDefinition,
  type ToolFormat,
  toolDefinitionsFor,
} from "../context/tool-formats.js";
import type { SessionToolSet } from "../context/tools.js";
import type { ContextBlock, SessionContextOptions, WritableContextProvider } from "../context/types.js";
import type { ChangeListener, SubscribeOptions, Unsubscribe } from "../contract/feed.js";
import type { CompactionDetails, SessionMessage, StoredCompaction } from "../contract/message.js";
import type {
  HistoryReadOptions,
  HistoryRowStat,
  RecentHistoryResult,
  SessionProvider,
  Siblings,
} from "../contract/provider.js";
import type { OwnerDigest } from "../contract/registry.js";
import type { SearchHit, SearchItem, SearchOptions, WithFactHits } from "../contract/search.js";
import type { SessionStore } from "../contract/store.js";
import { optionsArg } from "../options-arg.js";
import type { SqliteOptions } from "../sql/engines/sqlite/open.js";
import type { CompactFunction } from "../utils/compaction-helpers.js";
import type {
  CompactAfterOptions,
  CompactionErrorHandler,
  CompactionPlan,
  CompactionReport,
  CompactionSkip,
} from "./compaction-types.js";
import { SessionConfig } from "./config.js";
import {
  historyBatchesOf,
  historyOf,
  noRecentHistoryWarning,
  type RecentHistoryOptions,
  recentHistoryOf,
  searchOf,
  siblingsOf,
} from "./history.js";
import type { MessagesChangedListener } from "./hooks.js";
import { SessionLifecycle, type SessionParts } from "./lifecycle.js";
import { openSource } from "./open.js";
import type { SessionOptions } from "./options.js";
import { type ResolvedSource, resolveSource, type SessionSource } from "./source.js";
import { compact as runCompaction, SessionWrites } from "./writes.js";

export type { RecentHistoryOptions } from "./history.js";
export type { SessionOptions } from "./options.js";

/**
 * A conversation: tree-structured messages with branches, overlays and search, context blocks rendered into a
 * frozen system prompt, the model's memory tools, and compaction. Build one with `Session.create(source)` and
 * chain builder methods in any order; everything resolves on the first awaited call. `M` is the app's message
 * type (e.g. its AI SDK `UIMessage<Metadata, DataParts, Tools>`): writes take it and reads return it, a typed view
 * the app opts into with `Session.create<M>(...)` (the store keeps any valid message and checks no app schema).
 *
 * The class is the public surface only: what the builder sets is a {@link SessionConfig}, the storage and context
 * resolved on first use are a {@link SessionLifecycle}'s, and the writes with their status frame, compaction and
 * hook are its base class's (`SessionWrites`, `writes.ts`); history reads in `history.ts`, tool formats in `context/tool-formats.ts`.
 */
/** The store each Session was made on (none over a bare SessionProvider): see {@link storeOfSession}. */
const sessionStores = new WeakMap<object, SessionStore>();

/**
 * The store `session` was made on, or undefined for a Session over a bare `SessionProvider` (package-internal: the
 * AI SDK doors learn facts into it; not part of the Session's public surface).
 */
export function storeOfSession(session: Session): SessionStore | undefined {
  return sessionStores.get(session);
}

export class Session<M extends SessionMessage = SessionMessage> extends SessionWrites<M> {
  /** @internal */
  protected readonly config: SessionConfig;
  private readonly lifecycle: SessionLifecycle<M>;
  private readonly warnNoRecentHistory = noRecentHistoryWarning();

  // ── Construction ─────────────────────────────────────────────────────────────────────────────────────────────

  /**
   * Creates a session on a SQLite path, a database handle, an object with a `sql` tag (a Durable Object / Agent),
   * a SessionStore or a SessionProvider. Sessions on the same path share one connection (closed with the last).
   * `M` is the app's message type: given (`Session.create<MyUIMessage>(store)`) or taken from a typed source.
   */
  static create<M extends SessionMessage = SessionMessage>(
    source: SessionStore<M> | SessionProvider<M> | SessionSource,
    options: SqliteOptions = {},
  ): Session<M> {
    const opened = openSource(source as SessionSource, options);
    const session = new Session<M>(opened.target);
    session.lifecycle.release = opened.release;
    if (opened.frames) session.config.compaction.frames = opened.frames;
    return session;
  }

  /** Wraps a SessionStore (blocks without a provider are stored with it) or a SessionProvider (no auto-wiring). */
  constructor(provider: SessionProvider | SessionStore, options: SessionOptions = {}) {
    super();
    this.config = new SessionConfig(this, options);
    // The typed view: stores hold any valid message; reads are `M` because the app writes only `M`s.
    const source = resolveSource(provider as SessionSource) as ResolvedSource<M>;
    this.lifecycle = new SessionLifecycle(source, this.config);
    if (source.kind === "store") sessionStores.set(this, source.store as SessionStore);
  }

  /** The id this session is namespaced by (`""` = the default session). */
  get sessionId(): string {
    return this.config.sessionId;
  }

  /**
   * The cap this Session puts on a message (`withMaxMessageBytes` or the `maxMessageBytes` option), in UTF-8 bytes
   * of its JSON; `Infinity` when none is set. The store's own cap applies besides.
   */
  get maxMessageBytes(): number {
    return this.config.policy.maxMessageBytes;
  }

  // ── Builder: what is stored where (before first use) ─────────────────────────────────────────────────────────

  /** Namespaces this session's rows by id (required for several sessions in one store). */
  forSession(sessionId: string): this {
    this.lifecycle.assertConfigurable(
      "forSession",
      "a Session is one conversation. Keep one store per process (const store = new SqliteStore(path)) and " +
        "create a Session per conversation or request: Session.create(store).forSession(id), or use " +
        "SessionManager.getSession(id)",
    );
    this.config.setSessionId(sessionId);
    return this;
  }

  /**
   * Adds a context block. Without a provider it is a writable block stored with the session (when the storage
   * can hold blocks) or an empty read-only block.
   */
  withContext(label: string, options?: SessionContextOptions | null): this {
    this.lifecycle.assertConfigurable("withContext", "use addContext(label, options) on a session in use");
    this.config.addBlock(label, optionsArg(options, "withContext"));
    return this;
  }

  /** Persists the frozen system prompt (with the session's storage when no provider is given). */
  withCachedPrompt(provider?: WritableContextProvider): this {
    this.lifecycle.assertConfigurable(
      "withCachedPrompt",
      "create a new Session with withCachedPrompt() before its first call",
    );
    this.config.setPromptStore(provider);
    return this;
  }

  // ── Builder: behaviour (may change at any time) ──────────────────────────────────────────────────────────────

  /**
   * Registers the function that summarises a range of history (e.g. `createCompactFunction(...)`); may be called
   * at any time, also on a session in use (like `compactAfter` and `onCompactionError`).
   */
  onCompaction(fn: CompactFunction): this {
    this.config.setCompactFunction(fn);
    return this;
  }

  /** Compacts automatically after an append when the estimated tokens are strictly above `threshold`. */
  compactAfter(threshold: number, options?: CompactAfterOptions | null): this {
    this.config.setCompactionThreshold(threshold, optionsArg(options, "compactAfter"));
    return this;
  }

  /** Receives failures of automatic compaction (the append has already succeeded). */
  onCompactionError(handler: CompactionErrorHandler): this {
    this.config.setCompactionErrorHandler(handler);
    return this;
  }

  /**
   * Bounds what the memory tools return to the model: `maxHitChars` per search hit, `maxOutputChars` per result
   * (defaults 8,000 and 32,000); more is cut with a marker that tells the model how to see the rest. May be set
   * at any time.
   */
  withToolOutputLimits(limits: Partial<ToolOutputLimits>): this {
    this.config.setToolOutputLimits(limits);
    return this;
  }

  /**
   * Caps a message at `maxBytes` UTF-8 bytes of JSON (`metadata` included): a larger append, upsert, update or
   * import is refused with `TOO_LARGE`. Nothing is ever truncated on write (use `truncateOlderMessages` and the
   * row-size helpers of `agent-session/utils` to shrink what you send to a model).
   */
  withMaxMessageBytes(maxBytes: number): this {
    this.config.setMessageLimit(maxBytes);
    return this;
  }

  /** @deprecated the old name of {@link withMaxMessageBytes}: it now refuses a larger message instead of truncating it. */
  withRowSizeLimit(maxBytes: number): this {
    this.config.setMessageLimit(maxBytes);
    return this;
  }

  /** The reference's framework hook: `listener` hears this Session's own writes (null removes it). */
  internal_onMessagesChanged(listener: MessagesChangedListener | null): this {
    this.config.setMessagesChanged(listener);
    return this;
  }

  // ── Lifecycle ────────────────────────────────────────────────────────────────────────────────────────────────

  /** Resolves storage and loads every context block; every async method awaits this first. */
  async ready(): Promise<void> {
    await this.lifecycle.parts();
  }

  /** The storage contract this session writes through. */
  async provider(): Promise<SessionProvider<M>> {
    return (await this.lifecycle.parts()).provider;
  }

  /**
   * Calls `listener` after every durable write to this session — through this Session or any other writer of the
   * store, including other processes when the store keeps a change log (see docs/FEED.md).
   */
  subscribe(listener: ChangeListener, options: Omit<SubscribeOptions, "sessionId"> = {}): Unsubscribe {
    return this.lifecycle.subscribe(listener, options);
  }

  /**
   * Gives back storage this session opened itself (a SQLite path given to `Session.create` shares one connection
   * per file, closed when its last Session closes); a store or handle you passed in stays open for others. Either
   * way every later call of this session fails with `CLOSED`.
   */
  async close(): Promise<void> {
    await this.lifecycle.close();
  }

  // ── Reads ────────────────────────────────────────────────────────────────────────────────────────────────────

  /** The path from the root to `leafId` (default: the latest leaf), with compaction overlays applied. */
  async getHistory(leafId?: string | null): Promise<M[]> {
    return (await this.parts()).provider.getHistory(leafId);
  }

  /** One stored message (no overlay), or null. */
  async getMessage(id: string): Promise<M | null> {
    return (await this.parts()).provider.getMessage(id);
  }

  /**
   * The active path's tip: the newest message appended (a deleted tip gives way to the newest leaf below its nearest
   * surviving ancestor; see deleteMessages), or null when the path is empty.
   */
  async getLatestLeaf(): Promise<M | null> {
    return (await this.parts()).provider.getLatestLeaf();
  }

  /** The children of a message, oldest first (e.g. an original and a regenerated answer). */
  async getBranches(messageId: string): Promise<M[]> {
    return (await this.parts()).provider.getBranches(messageId);
  }

  /**
   * The message among its siblings for a "◀ 2/3 ▶" switcher: its parent's children, or the session's roots for a
   * root (an edit of the first message makes a new root), oldest first, with its index; null when it is not
   * stored. At most `MAX_SIBLINGS` (100): a message with more is `TOO_LARGE`.
   */
  async getSiblings(messageId: string): Promise<Siblings<M> | null> {
    return siblingsOf((await this.parts()).provider, messageId);
  }

  /** Number of stored messages on the path to `leafId` (overlays not applied). */
  async getPathLength(leafId?: string | null): Promise<number> {
    return (await this.parts()).provider.getPathLength(leafId);
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
    const { provider } = await this.parts();
    return recentHistoryOf(provider, maxContentBytes, minRecentMessages, leafId, this.warnNoRecentHistory);
  }

  /**
   * The active path (or `leafId`'s) one message at a time with overlays applied, read in bounded windows, so a
   * long session never sits in memory whole; `newestFirst` reads from the leaf, `signal` aborts.
   */
  async *history(options?: HistoryReadOptions | null): AsyncGenerator<M> {
    yield* historyOf((await this.parts()).provider, options);
  }

  /** Like {@link history}, in arrays of at most `batchSize` messages and `maxBatchBytes` bytes. */
  async *historyBatches(options?: HistoryReadOptions | null): AsyncGenerator<M[]> {
    yield* historyBatchesOf((await this.parts()).provider, options);
  }

  /** Per-row sizes of the path, or null when the provider cannot tell. */
  async getHistoryRowStats(leafId?: string | null): Promise<HistoryRowStat[] | null> {
    const { provider } = await this.parts();
    return provider.getHistoryRowStats ? provider.getHistoryRowStats(leafId) : null;
  }

  /**
   * Ranked recall over this session's messages, best first in `rank` order (see {@link SearchOptions}; every branch
   * unless `branch: "active"`).
   */
  search(query: string, options: WithFactHits<SearchOptions>): Promise<SearchItem<M>[]>;
  search(query: string, options?: SearchOptions | null): Promise<SearchHit<M>[]>;
  async search(
    query: string,
    options?: SearchOptions | WithFactHits<SearchOptions> | null,
  ): Promise<SearchItem<M>[]> {
    return searchOf((await this.parts()).provider, query, optionsArg(options, "search"), this.sessionId);
  }

  // ── Compaction ───────────────────────────────────────────────────────────────────────────────────────────────

  /** Stores a compaction overlay that replaces `fromId`..`toId` when history is read. */
  async addCompaction(
    summary: string,
    fromId: string,
    toId: string,
    details?: CompactionDetails,
  ): Promise<StoredCompaction> {
    return (await this.parts()).provider.addCompaction(summary, fromId, toId, details);
  }

  /** Every stored overlay of this session, oldest first (superseded ones included). */
  async getCompactions(): Promise<StoredCompaction[]> {
    return (await this.parts()).provider.getCompactions();
  }

  /**
   * The keyed digests of this session's owner (docs/PRIVACY.md, "Ids derived from content"): the AI SDK door derives
   * an edited message's id with them, so the id confirms no guess of the text. None for an owner in clear.
   */
  async contentDigests(): Promise<OwnerDigest[]> {
    // This package's providers have it (store/provider.ts); another store's has not, and keeps plain digests.
    const provider = (await this.parts()).provider as SessionProvider<M> & {
      contentDigests?(): Promise<OwnerDigest[]>;
    };
    return (await provider.contentDigests?.()) ?? [];
  }

  /**
   * Summarises older history of the path to `leafId` into an overlay and reports what it did (range, tokens
   * before and after, summary size); null when there is nothing to compact (`explainCompaction()` says why). A blank or non-shrinking summary is
   * refused (`COMPACTION_REFUSED`) and nothing is stored; a throwing summariser rejects.
   */
  async compact(leafId?: string | null): Promise<CompactionReport | null>;
  async compact(leafId: string | null | undefined, options: { dryRun: true }): Promise<CompactionPlan | null>;
  async compact(
    leafId?: string | null,
    options?: { dryRun?: boolean },
  ): Promise<CompactionReport | CompactionPlan | null> {
    return runCompaction(await this.parts(), this.config, leafId, options?.dryRun === true);
  }

  /**
   * What `compact()` would do, computed without calling the model (a dry run); null when it would store nothing
   * (`explainCompaction()` says why).
   */
  async planCompaction(leafId?: string | null): Promise<CompactionPlan | null> {
    return (await this.parts()).compactor.plan(leafId);
  }

  /**
   * The dry run's plan (`compacts: true`), or why a compaction would store nothing (`compacts: false`: a
   * `reason`, a `message` with the numbers, and the numbers), without calling the model.
   */
  async explainCompaction(leafId?: string | null): Promise<CompactionPlan | CompactionSkip> {
    return (await this.parts()).compactor.explain(leafId);
  }

  /** Estimated tokens of the next model call (history with overlays plus the frozen prompt). */
  async estimateTokens(leafId?: string | null): Promise<number> {
    return (await this.parts()).compactor.estimate(leafId);
  }

  // ── Context blocks and the system prompt ─────────────────────────────────────────────────────────────────────

  /** A block as last loaded, or null (blocks load on the first awaited call, e.g. `await session.ready()`). */
  getContextBlock(label: string): ContextBlock | null {
    return this.lifecycle.resolved?.context.blocks.get(label) ?? null;
  }

  /** Every block as last loaded, in prompt order (empty until the session is ready). */
  getContextBlocks(): ContextBlock[] {
    return this.lifecycle.resolved?.context.blocks.list() ?? [];
  }

  /** Replaces a writable block's content (`READONLY`, `TOKEN_LIMIT` errors); the frozen prompt is untouched. */
  async replaceContextBlock(label: string, content: string): Promise<ContextBlock> {
    return (await this.parts()).context.blocks.replace(label, content);
  }

  /** Appends to a writable block, on a new line. */
  async appendContextBlock(label: string, content: string): Promise<ContextBlock> {
    return (await this.parts()).context.blocks.append(label, content);
  }

  /** Writes a document of a writable skill block. */
  async setSkill(label: string, key: string, content: string, description?: string): Promise<ContextBlock> {
    return (await this.parts()).context.blocks.setKeyed(label, key, content, description);
  }

  /** Indexes an entry of a writable search block. */
  async setSearchEntry(label: string, key: string, content: string): Promise<ContextBlock> {
    return (await this.parts()).context.blocks.setKeyed(label, key, content);
  }

  /** Adds a block at runtime and loads it; call `refreshSystemPrompt()` to show it in the prompt. */
  async addContext(label: string, options?: SessionContextOptions | null): Promise<ContextBlock> {
    const { context } = await this.parts();
    await context.add(label, optionsArg(options, "addContext"));
    return context.blocks.get(label)!;
  }

  /** Removes a block (and its loaded-skill tracking); true when it existed. */
  removeContext(label: string): boolean {
    return this.lifecycle.removeContext(label);
  }

  /** The system prompt, rendered once and then frozen (persisted with `withCachedPrompt`) for prompt caching. */
  async freezeSystemPrompt(): Promise<string> {
    return (await this.parts()).context.freeze();
  }

  /** Reloads every block, re-renders and persists the prompt, and returns it. */
  async refreshSystemPrompt(): Promise<string> {
    return (await this.parts()).context.refresh();
  }

  /**
   * What changed in the `whenChanged: "remind"` blocks since the prompt was frozen: their current values under a
   * note that they replace the prompt's copies, or null. Send it after the cached prefix (e.g. appended to the
   * latest user message of the model call) and never store it; it comes back on every call until
   * `refreshSystemPrompt()` promotes the values into the prompt.
   */
  async reminder(): Promise<string | null> {
    return (await this.parts()).context.reminder();
  }

  /** Unloads a loaded skill; false when it was not loaded. */
  async unloadSkill(label: string, key: string): Promise<boolean> {
    return (await this.parts()).context.unloadSkill(label, key);
  }

  /**
   * The loaded skills as `label:key`. Async, as in the reference: it waits for the session to be ready, so a
   * fresh Session over a history with `load_context` results answers from that history on its first call.
   */
  async getLoadedSkillKeys(): Promise<Set<string>> {
    return (await this.parts()).context.skills.keys();
  }

  // ── The model's memory tools ─────────────────────────────────────────────────────────────────────────────────

  /**
   * The memory tools (an AI SDK ToolSet) for the blocks present now; `limits` overrides the session's tool-output
   * limits for these tools.
   */
  async tools(limits?: Partial<ToolOutputLimits>): Promise<SessionToolSet> {
    const bounds = toolOutputLimits(limits, this.config.toolOutput);
    return (await this.parts()).context.tools(bounds);
  }

  /**
   * The same tools as JSON-Schema definitions: `"openai"` (Chat Completions), `"openai-responses"` (Responses
   * API), both with `strict: true` where the schema allows, or `"anthropic"`.
   */
  async toolDefinitions(format: "openai"): Promise<OpenAIToolDefinition[]>;
  async toolDefinitions(format: "openai-responses"): Promise<OpenAIResponsesToolDefinition[]>;
  async toolDefinitions(format: "anthropic"): Promise<AnthropicToolDefinition[]>;
  async toolDefinitions(
    format: ToolFormat,
  ): Promise<OpenAIToolDefinition[] | OpenAIResponsesToolDefinition[] | AnthropicToolDefinition[]> {
    return toolDefinitionsFor(await this.tools(), format);
  }

  /**
   * Executes a memory-tool call from any SDK — a name and input (object or JSON string), or an OpenAI tool call
   * as received (Chat Completions or Responses API); never throws.
   */
  async executeTool(call: OpenAIToolCall): Promise<string>;
  async executeTool(name: string, input: unknown): Promise<string>;
  async executeTool(nameOrCall: string | OpenAIToolCall, input?: unknown): Promise<string> {
    return executeToolCall(() => this.tools(), nameOrCall, input);
  }

  /** @internal the resolved parts every async method works through (resolving them on first use). */
  protected parts(): Promise<SessionParts<M>> {
    return this.lifecycle.parts();
  }
}
