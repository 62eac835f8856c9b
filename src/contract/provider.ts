// The per-session storage contract: the reference's provider methods, their options and what a write answers.
import type { CompactionDetails, SessionMessage, StoredCompaction } from "./message.js";
import type { SearchOptions, SearchResult } from "./search.js";

/** Size of one stored row on a path (UTF-8 bytes of its JSON). */
export interface HistoryRowStat {
  id: string;
  role: string;
  bytes: number;
  /** The library's token estimate of the row (src/message/tokens.ts); set by this package's providers. */
  tokens?: number;
}

/** Options of a streaming history read (`Session.history`, `Session.historyBatches`). */
export interface HistoryReadOptions {
  /** Read the path to this message instead of the latest leaf (an unknown id reads nothing). */
  leafId?: string | null | undefined;
  /** Newest message first (batches too): a consumer that stops early reads only the newest rows. */
  newestFirst?: boolean | undefined;
  /** At most this many messages per batch (default 100). */
  batchSize?: number | undefined;
  /**
   * At most this many bytes of JSON per batch, counting offloaded media as it reads back (default 1 MiB); a single
   * larger message is yielded alone, never cut.
   */
  maxBatchBytes?: number | undefined;
  /** Aborting rejects the pending read with the signal's reason and stops reading. */
  signal?: AbortSignal | undefined;
}

/** A byte-budgeted suffix of a path. */
export interface RecentHistoryResult<M extends SessionMessage = SessionMessage> {
  messages: M[];
  /** True when older messages of the path were left out. */
  truncated: boolean;
  /** Bytes of stored JSON over the whole path, not only the returned window. */
  totalContentBytes: number;
}

/** What an append did. */
export interface AppendResult<M extends SessionMessage = SessionMessage> {
  /** False when a message with this id already existed in the session (nothing was written). */
  inserted: boolean;
  /**
   * The stored form: the message as a later read returns it (the first content when the id already existed; the
   * message as given when it was an ignored overlay echo). Always set by this package's providers.
   */
  message?: M;
}

/** Who produced a write: `"client"` writes have the store's and Session's `reservedMetadataKeys` stripped. */
export type WriteSource = "client" | "server";

/** Options of an append. */
export interface AppendOptions {
  /**
   * Optimistic concurrency: the append fails with `CONFLICT` unless the session's latest leaf is still this id
   * (`null` = the session must be empty).
   */
  expectedLeafId?: string | null;
  /** Default `"server"`; `"client"` strips reserved metadata keys (the trust policy). */
  source?: WriteSource;
}

/** Options of an upsert. */
/**
 * Where a deleted tip goes. `"newest-leaf"` (the default): to its nearest surviving ancestor, then to the newest
 * leaf below that ancestor, so deleting a regenerated answer brings back the answer it replaced, and a linear
 * history pops to the previous message; never to a leaf outside that ancestor's subtree. `"ancestor"`: to the
 * nearest surviving ancestor itself, so the path is exactly the previous one minus the deleted messages (the OpenAI
 * Agents adapter's `popItem`, whose replaced items must not come back). None surviving: an empty path either way.
 */
export type DeleteTip = "newest-leaf" | "ancestor";

/** Options of `deleteMessages`. */
export interface DeleteOptions {
  /** Where a deleted tip goes (default `"newest-leaf"`; see {@link DeleteTip}). */
  tip?: DeleteTip | undefined;
}

export interface UpsertOptions {
  /** Default `"server"`; `"client"` strips reserved metadata keys (the trust policy). */
  source?: WriteSource;
}

/** What an upsert did: inserted a new message, replaced a stored one, or nothing (identical content, overlay echo). */
export interface UpsertResult<M extends SessionMessage = SessionMessage> {
  inserted: boolean;
  /** True when a stored message was replaced by different content. */
  updated: boolean;
  /** The stored form, as a later read returns it. */
  message?: M;
}

/** What an update did. */
export interface UpdateResult<M extends SessionMessage = SessionMessage> {
  /** False when the stored content was already identical (nothing was written). */
  updated: boolean;
  /** The stored form, as a later read returns it. */
  message?: M;
}

/** Where and when {@link SessionProvider.importMessage} places a historical message. */
export interface ImportMessageOptions {
  /** Omitted = after the latest leaf, `null` = a new root, a string = that message of this session. */
  parentId?: string | null;
  /** The time the message was originally stored (default: the message's own `createdAt`, else now). */
  createdAt?: Date | string;
}

/**
 * A message among its siblings, for a "◀ 2/3 ▶" branch switcher: the children of its parent, or the roots of its
 * session for a root (an edit of the first message makes a new root), oldest first; `siblings[index]` is the message.
 */
export interface Siblings<M extends SessionMessage = SessionMessage> {
  siblings: M[];
  index: number;
}

/**
 * The per-session storage contract (same method names as the reference). Every method is async.
 * `parentId`: omitted = after the latest leaf, `null` = a new root, a string = that message of this session.
 * `M` is the message type reads are typed as (a typed view: stores keep any valid message, see docs/AI-SDK.md).
 */
export interface SessionProvider<M extends SessionMessage = SessionMessage> {
  getMessage(id: string): Promise<M | null>;
  getHistory(leafId?: string | null): Promise<M[]>;
  getLatestLeaf(): Promise<M | null>;
  getBranches(messageId: string): Promise<M[]>;
  /**
   * The message among its siblings (see {@link Siblings}), or null when it is not stored; at most `MAX_SIBLINGS`
   * (more is `TOO_LARGE`), read without walking the session. Optional: `Session.getSiblings` needs it.
   */
  getSiblings?(messageId: string): Promise<Siblings<M> | null>;
  getPathLength(leafId?: string | null): Promise<number>;
  getRecentHistory?(
    leafId: string | null | undefined,
    maxContentBytes: number,
    minRecentMessages?: number,
  ): Promise<RecentHistoryResult<M>>;
  getHistoryRowStats?(leafId?: string | null): Promise<HistoryRowStat[]>;
  /**
   * The stored rows on the path to `leafId` (the latest leaf when omitted) with a part calling one of `toolNames`
   * (type `tool-<name>` or `toolName`), root first, payloads restored; overlays are not applied, so rows inside a
   * compacted range count. Only the rows it returns are parsed; `INVALID_ARGUMENT` unless 1 to 16 names. Optional:
   * without it a caller reads every row of the path.
   */
  getToolMessages?(toolNames: readonly string[], leafId?: string | null): Promise<M[]>;
  /**
   * The overlay-applied path in bounded batches, read window by window (see {@link HistoryReadOptions}). Optional:
   * without it `Session.historyBatches` slices `getHistory`, which loads the whole path first.
   */
  historyBatches?(options?: HistoryReadOptions): AsyncIterable<M[]>;
  /**
   * Estimated tokens of `getHistory(leafId)` (the library's heuristic, overlays counted as their summary message),
   * answered without reading the messages where the backend keeps running totals.
   */
  getContextTokens?(leafId?: string | null): Promise<number>;
  /** Providers written for the reference return nothing; ours report whether a row was inserted. */
  appendMessage(
    message: M,
    parentId?: string | null,
    options?: AppendOptions,
    // biome-ignore lint/suspicious/noConfusingVoidType: reference providers are `async` functions returning nothing
  ): Promise<AppendResult<M> | void>;
  /** Reference providers return nothing; ours report whether anything was written (identical content is not). */
  // biome-ignore lint/suspicious/noConfusingVoidType: reference providers are `async` functions returning nothing
  updateMessage(message: M): Promise<UpdateResult<M> | void>;
  /**
   * Inserts the message, or replaces the stored one with its id (keeping its place in the tree). Optional: without
   * it, `Session.upsertMessage` reads and then updates or appends.
   */
  upsertMessage?(message: M, parentId?: string | null, options?: UpsertOptions): Promise<UpsertResult<M>>;
  /**
   * Writes one historical message verbatim with its original time (migrations); a stored id is skipped
   * (`inserted: false`). Optional: `Session.importMessage` needs it.
   */
  importMessage?(message: M, options?: ImportMessageOptions): Promise<AppendResult<M>>;
  /**
   * Splices the messages out; a deleted latest leaf gives way to the newest leaf below its nearest surviving
   * ancestor, or to that ancestor with `tip: "ancestor"` (none surviving: null). Reference providers ignore options.
   */
  deleteMessages(messageIds: string[], options?: DeleteOptions): Promise<void>;
  clearMessages(): Promise<void>;
  addCompaction(
    summary: string,
    fromMessageId: string,
    toMessageId: string,
    details?: CompactionDetails,
  ): Promise<StoredCompaction>;
  getCompactions(): Promise<StoredCompaction[]>;
  searchMessages?(query: string, limit?: number, options?: SearchOptions): Promise<SearchResult<M>[]>;
}
