import {
  type AnthropicToolDefinition,
  dispatchToolCall,
  type OpenAIToolDefinition,
  toAnthropicTools,
  toOpenAITools,
} from "../context/tool-formats.js";
import type { SessionToolSet } from "../context/tools.js";
import type {
  ContextBlock,
  ContextConfig,
  SessionContextOptions,
  WritableContextProvider,
} from "../context/types.js";
import { assertContextOptions, assertLabel, isWritableProvider } from "../context/types.js";
import { errorMessage, SessionError } from "../errors.js";
import { assertParentId } from "../message.js";
import type { SqliteOptions } from "../sqlite/open.js";
import type { SessionStore } from "../store/types.js";
import type {
  AppendOptions,
  AppendResult,
  CompactionDetails,
  HistoryRowStat,
  RecentHistoryResult,
  SearchOptions,
  SearchResult,
  SessionMessage,
  SessionProvider,
  StoredCompaction,
} from "../types.js";
import { type ContextSetup, SessionContext } from "./context.js";
import { type ResolvedSource, resolveSource, type SessionSource } from "./source.js";

/** Options of `new Session(provider, options)`. */
export interface SessionOptions {
  /** Session id used to namespace rows when the first argument is a store (default `""`). */
  sessionId?: string;
  /** Context blocks, in prompt order. */
  context?: ContextConfig[];
  /** Where the frozen system prompt is persisted. */
  promptStore?: WritableContextProvider;
}

interface SessionState {
  provider: SessionProvider;
  store: SessionStore | undefined;
  context: SessionContext;
}

/**
 * A conversation: tree-structured messages with branches, overlays and search. Build one with
 * `Session.create(source)` and chain builder methods in any order; everything resolves on the first awaited call.
 */
export class Session {
  private readonly source: ResolvedSource;
  private sessionIdValue: string;
  private ownsStore = false;
  private initialising: Promise<SessionState> | undefined;
  private resolved: SessionState | undefined;
  private recentHistoryWarned = false;
  private contextSetup: ContextSetup = { blocks: [], promptStore: undefined };

  /** Wraps a ready SessionProvider or SessionStore (no auto-wiring of SQLite context rows). */
  constructor(provider: SessionProvider | SessionStore, options: SessionOptions = {}) {
    this.source = resolveSource(provider as SessionSource);
    this.sessionIdValue = options.sessionId ?? "";
    if (typeof this.sessionIdValue !== "string") {
      throw new SessionError("INVALID_ARGUMENT", "sessionId must be a string");
    }
    for (const { label, ...rest } of options.context ?? []) this.withContext(label, rest);
    if (options.promptStore) this.withCachedPrompt(options.promptStore);
  }

  /**
   * Creates a session on a SQLite path, a database handle, an object with a `sql` tag (a Durable Object / Agent),
   * a SessionStore or a SessionProvider.
   */
  static create(source: SessionSource, options: SqliteOptions = {}): Session {
    const resolved = resolveSource(source, options);
    const session = new Session(resolved.kind === "store" ? resolved.store : resolved.provider);
    session.ownsStore = resolved.kind === "store" && resolved.owned;
    return session;
  }

  /** The id this session is namespaced by (`""` = the default session). */
  get sessionId(): string {
    return this.sessionIdValue;
  }

  /** Builder methods configure; once the session is in use its configuration is fixed. */
  protected assertConfigurable(method: string): void {
    if (this.initialising) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `${method}() must be called before the session is first used (configuration is fixed on first use)`,
      );
    }
  }

  /** Namespaces this session's rows by id (required for several sessions in one store). */
  forSession(sessionId: string): this {
    this.assertConfigurable("forSession");
    if (typeof sessionId !== "string") {
      throw new SessionError("INVALID_ARGUMENT", `A session id must be a string, got ${typeof sessionId}`);
    }
    this.sessionIdValue = sessionId;
    return this;
  }

  /**
   * Adds a context block. Without a provider it is a writable block stored with the session (when the storage
   * can hold blocks) or an empty read-only block.
   */
  withContext(label: string, options: SessionContextOptions = {}): this {
    this.assertConfigurable("withContext");
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
    this.assertConfigurable("withCachedPrompt");
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

  protected state(): Promise<SessionState> {
    if (this.resolved) return Promise.resolve(this.resolved);
    this.initialising ??= this.initialise().then((state) => {
      this.resolved = state;
      return state;
    });
    return this.initialising;
  }

  protected async initialise(): Promise<SessionState> {
    if (this.source.kind === "provider") {
      if (this.sessionIdValue !== "") {
        throw new SessionError(
          "INVALID_ARGUMENT",
          "forSession() needs a store; a SessionProvider is already bound to one session",
        );
      }
      const provider = this.source.provider;
      return {
        provider,
        store: undefined,
        context: await SessionContext.open(this.contextSetup, provider, undefined, ""),
      };
    }
    const store = this.source.store;
    const provider = store.session(this.sessionIdValue);
    const context = await SessionContext.open(this.contextSetup, provider, store, this.sessionIdValue);
    return { provider, store, context };
  }

  /** The storage contract this session writes through. */
  async provider(): Promise<SessionProvider> {
    return (await this.state()).provider;
  }

  /** Appends a message: after the latest leaf by default, under `parentId`, or as a new root with `null`. */
  async appendMessage(
    message: SessionMessage,
    parentId?: string | null,
    options?: AppendOptions,
  ): Promise<AppendResult> {
    assertParentId(parentId);
    const { provider } = await this.state();
    const result = await provider.appendMessage(message, parentId, options);
    return result ?? { inserted: true };
  }

  /** Replaces a stored message (matched by id); an unknown id is `NOT_FOUND`. */
  async updateMessage(message: SessionMessage): Promise<void> {
    await (await this.state()).provider.updateMessage(message);
  }

  /** Deletes messages; their children are spliced onto their parents. */
  async deleteMessages(messageIds: string[]): Promise<void> {
    await (await this.state()).provider.deleteMessages(messageIds);
  }

  /** Removes every message and overlay of this session, forgets loaded skills and re-renders the prompt. */
  async clearMessages(): Promise<void> {
    const { provider, context } = await this.state();
    await provider.clearMessages();
    context.skills.clear();
    await context.refresh();
  }

  /** The path from the root to `leafId` (default: the latest leaf), with compaction overlays applied. */
  async getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    return (await this.state()).provider.getHistory(leafId);
  }

  /** One stored message (no overlay), or null. */
  async getMessage(id: string): Promise<SessionMessage | null> {
    return (await this.state()).provider.getMessage(id);
  }

  /** The newest message without children, or null for an empty session. */
  async getLatestLeaf(): Promise<SessionMessage | null> {
    return (await this.state()).provider.getLatestLeaf();
  }

  /** The children of a message, oldest first (e.g. an original and a regenerated answer). */
  async getBranches(messageId: string): Promise<SessionMessage[]> {
    return (await this.state()).provider.getBranches(messageId);
  }

  /** Number of stored messages on the path to `leafId` (overlays not applied). */
  async getPathLength(leafId?: string | null): Promise<number> {
    return (await this.state()).provider.getPathLength(leafId);
  }

  /** The newest messages of the active path that fit `maxContentBytes` (always at least `minRecentMessages`). */
  async getRecentHistory(
    maxContentBytes: number,
    minRecentMessages = 1,
    leafId?: string | null,
  ): Promise<RecentHistoryResult> {
    const { provider } = await this.state();
    if (provider.getRecentHistory)
      return provider.getRecentHistory(leafId, maxContentBytes, minRecentMessages);
    if (!this.recentHistoryWarned) {
      this.recentHistoryWarned = true;
      console.warn(
        "agent-session: this SessionProvider has no getRecentHistory; reading the whole path instead",
      );
    }
    const messages = await provider.getHistory(leafId);
    const totalContentBytes = messages.reduce((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)), 0);
    return { messages, truncated: false, totalContentBytes };
  }

  /** Per-row sizes of the path, or null when the provider cannot tell. */
  async getHistoryRowStats(leafId?: string | null): Promise<HistoryRowStat[] | null> {
    const { provider } = await this.state();
    return provider.getHistoryRowStats ? provider.getHistoryRowStats(leafId) : null;
  }

  /** Full-text search over this session's messages (every branch unless `branch: "active"`). */
  async search(query: string, options: SearchOptions = {}): Promise<SearchResult[]> {
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

  /** A block as last loaded, or null (blocks load on the first awaited call, e.g. `await session.ready()`). */
  getContextBlock(label: string): ContextBlock | null {
    return this.resolved?.context.blocks.get(label) ?? null;
  }

  /** Every block as last loaded, in prompt order (empty until the session is ready). */
  getContextBlocks(): ContextBlock[] {
    return this.resolved?.context.blocks.list() ?? [];
  }

  /** Replaces a writable block's content (`READONLY`, `TOKEN_LIMIT` errors); the frozen prompt is untouched. */
  async replaceContextBlock(label: string, content: string): Promise<ContextBlock> {
    return (await this.state()).context.blocks.replace(label, content);
  }

  /** Appends to a writable block, on a new line. */
  async appendContextBlock(label: string, content: string): Promise<ContextBlock> {
    return (await this.state()).context.blocks.append(label, content);
  }

  /** Writes a document of a writable skill block. */
  async setSkill(label: string, key: string, content: string, description?: string): Promise<ContextBlock> {
    return (await this.state()).context.blocks.setKeyed(label, key, content, description);
  }

  /** Indexes an entry of a writable search block. */
  async setSearchEntry(label: string, key: string, content: string): Promise<ContextBlock> {
    return (await this.state()).context.blocks.setKeyed(label, key, content);
  }

  /** Adds a block at runtime and loads it; call `refreshSystemPrompt()` to show it in the prompt. */
  async addContext(label: string, options: SessionContextOptions = {}): Promise<ContextBlock> {
    const { context } = await this.state();
    await context.add(label, options);
    return context.blocks.get(label)!;
  }

  /** Removes a block (and its loaded-skill tracking); true when it existed. */
  removeContext(label: string): boolean {
    if (this.resolved) return this.resolved.context.remove(label);
    if (this.initialising) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "removeContext() cannot run while the session is initialising",
      );
    }
    const before = this.contextSetup.blocks.length;
    this.contextSetup.blocks = this.contextSetup.blocks.filter((b) => b.label !== label);
    return this.contextSetup.blocks.length < before;
  }

  /** The system prompt, rendered once and then frozen (persisted with `withCachedPrompt`) for prompt caching. */
  async freezeSystemPrompt(): Promise<string> {
    return (await this.state()).context.freeze();
  }

  /** Reloads every block, re-renders and persists the prompt, and returns it. */
  async refreshSystemPrompt(): Promise<string> {
    return (await this.state()).context.refresh();
  }

  /** The memory tools (an AI SDK ToolSet) for the blocks present now. */
  async tools(): Promise<SessionToolSet> {
    return (await this.state()).context.tools();
  }

  /** The same tools as JSON-Schema definitions for the OpenAI or Anthropic tool formats. */
  async toolDefinitions(format: "openai"): Promise<OpenAIToolDefinition[]>;
  async toolDefinitions(format: "anthropic"): Promise<AnthropicToolDefinition[]>;
  async toolDefinitions(
    format: "openai" | "anthropic",
  ): Promise<OpenAIToolDefinition[] | AnthropicToolDefinition[]> {
    const tools = await this.tools();
    if (format === "openai") return toOpenAITools(tools);
    if (format === "anthropic") return toAnthropicTools(tools);
    throw new SessionError(
      "INVALID_ARGUMENT",
      `Unknown tool format ${JSON.stringify(format)}: use "openai" or "anthropic"`,
    );
  }

  /** Executes a named memory-tool call from any SDK (input as object or JSON string); never throws. */
  async executeTool(name: string, input: unknown): Promise<string> {
    try {
      return await dispatchToolCall(await this.tools(), name, input);
    } catch (error) {
      return `Error: ${errorMessage(error)}`;
    }
  }

  /** Unloads a loaded skill; false when it was not loaded. */
  async unloadSkill(label: string, key: string): Promise<boolean> {
    return (await this.state()).context.unloadSkill(label, key);
  }

  /** The loaded skills as `label:key`. */
  getLoadedSkillKeys(): Set<string> {
    return this.resolved?.context.skills.keys() ?? new Set();
  }

  /** Closes storage this session opened itself (a SQLite path given to `Session.create`). */
  async close(): Promise<void> {
    if (this.ownsStore && this.source.kind === "store") await this.source.store.close();
  }
}
