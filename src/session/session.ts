import { SessionError } from "../errors.js";
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
import { type ResolvedSource, resolveSource, type SessionSource } from "./source.js";

/** Options of `new Session(provider, options)`. */
export interface SessionOptions {
  /** Session id used to namespace rows when the first argument is a store (default `""`). */
  sessionId?: string;
}

interface SessionState {
  provider: SessionProvider;
  store: SessionStore | undefined;
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

  /** Wraps a ready SessionProvider or SessionStore (no auto-wiring of SQLite context rows). */
  constructor(provider: SessionProvider | SessionStore, options: SessionOptions = {}) {
    this.source = resolveSource(provider as SessionSource);
    this.sessionIdValue = options.sessionId ?? "";
    if (typeof this.sessionIdValue !== "string") {
      throw new SessionError("INVALID_ARGUMENT", "sessionId must be a string");
    }
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

  /** Resolves storage (and, with the builder, context blocks); every async method awaits this first. */
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
      return { provider: this.source.provider, store: undefined };
    }
    return { provider: this.source.store.session(this.sessionIdValue), store: this.source.store };
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

  /** Removes every message and overlay of this session. */
  async clearMessages(): Promise<void> {
    await (await this.state()).provider.clearMessages();
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

  /** Closes storage this session opened itself (a SQLite path given to `Session.create`). */
  async close(): Promise<void> {
    if (this.ownsStore && this.source.kind === "store") await this.source.store.close();
  }
}
