/**
 * One part of a message; structurally compatible with the AI SDK's `UIMessagePart`. Fields not declared here
 * (provider metadata, data parts, files) are stored and returned untouched.
 */
export interface SessionMessagePart {
  type: string;
  text?: string;
  reasoning?: string;
  toolCallId?: string;
  toolName?: string;
  input?: unknown;
  output?: unknown;
  state?: string;
  result?: unknown;
  errorText?: string;
  /** AI SDK v4 tool parts (`tool-invocation`). */
  toolInvocation?: unknown;
  /** AI SDK v4 tool-call arguments. */
  args?: unknown;
}

/** A stored message; the AI SDK's `UIMessage` can be passed as is and every field round-trips. */
export interface SessionMessage {
  id: string;
  role: string;
  parts: SessionMessagePart[];
  createdAt?: Date;
  metadata?: unknown;
}

/** A compaction overlay: `summary` replaces the path range `fromMessageId`..`toMessageId` when history is read. */
export interface StoredCompaction {
  id: string;
  summary: string;
  fromMessageId: string;
  toMessageId: string;
  /** ISO-8601 creation time. */
  createdAt: string;
  /** What the compaction did (tokens before/after, covered messages), when recorded. */
  details?: CompactionDetails;
}

/** The record a compaction keeps of what it did. */
export interface CompactionDetails {
  coveredMessages?: number;
  tokensBefore?: number;
  tokensAfter?: number;
  summaryTokens?: number;
  summaryChars?: number;
  [key: string]: unknown;
}

/** One full-text search hit. */
export interface SearchResult {
  id: string;
  role: string;
  /** The indexed text of the message (its text parts). */
  content: string;
  /** ISO-8601 time the message was stored. */
  createdAt?: string;
  sessionId?: string;
  /** Whether the message lies on its session's active path (set when a branch filter was requested). */
  onActivePath?: boolean;
}

/** Which messages a search may return: only the active path of each session, or every branch. */
export type SearchBranch = "active" | "all";

/** Options of a search. */
export interface SearchOptions {
  limit?: number;
  branch?: SearchBranch;
}

/** Size of one stored row on a path (UTF-8 bytes of its JSON). */
export interface HistoryRowStat {
  id: string;
  role: string;
  bytes: number;
}

/** A byte-budgeted suffix of a path. */
export interface RecentHistoryResult {
  messages: SessionMessage[];
  /** True when older messages of the path were left out. */
  truncated: boolean;
  /** Bytes of stored JSON over the whole path, not only the returned window. */
  totalContentBytes: number;
}

/** What an append did. */
export interface AppendResult {
  /** False when a message with this id already existed in the session (nothing was written). */
  inserted: boolean;
}

/** Options of an append. */
export interface AppendOptions {
  /**
   * Optimistic concurrency: the append fails with `CONFLICT` unless the session's latest leaf is still this id
   * (`null` = the session must be empty).
   */
  expectedLeafId?: string | null;
}

/**
 * The per-session storage contract (same method names as the reference). Every method is async.
 * `parentId`: omitted = after the latest leaf, `null` = a new root, a string = that message of this session.
 */
export interface SessionProvider {
  getMessage(id: string): Promise<SessionMessage | null>;
  getHistory(leafId?: string | null): Promise<SessionMessage[]>;
  getLatestLeaf(): Promise<SessionMessage | null>;
  getBranches(messageId: string): Promise<SessionMessage[]>;
  getPathLength(leafId?: string | null): Promise<number>;
  getRecentHistory?(
    leafId: string | null | undefined,
    maxContentBytes: number,
    minRecentMessages?: number,
  ): Promise<RecentHistoryResult>;
  getHistoryRowStats?(leafId?: string | null): Promise<HistoryRowStat[]>;
  /**
   * Estimated tokens of `getHistory(leafId)` (the library's heuristic, overlays counted as their summary message),
   * answered without reading the messages where the backend keeps running totals.
   */
  getContextTokens?(leafId?: string | null): Promise<number>;
  /** Providers written for the reference return nothing; ours report whether a row was inserted. */
  appendMessage(
    message: SessionMessage,
    parentId?: string | null,
    options?: AppendOptions,
    // biome-ignore lint/suspicious/noConfusingVoidType: reference providers are `async` functions returning nothing
  ): Promise<AppendResult | void>;
  updateMessage(message: SessionMessage): Promise<void>;
  deleteMessages(messageIds: string[]): Promise<void>;
  clearMessages(): Promise<void>;
  addCompaction(
    summary: string,
    fromMessageId: string,
    toMessageId: string,
    details?: CompactionDetails,
  ): Promise<StoredCompaction>;
  getCompactions(): Promise<StoredCompaction[]>;
  searchMessages?(query: string, limit?: number, options?: SearchOptions): Promise<SearchResult[]>;
}
