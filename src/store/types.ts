import type {
  SearchOptions,
  SearchResult,
  SessionMessage,
  SessionProvider,
  StoredCompaction,
} from "../types.js";
import type { ErasureCondition, ErasureCounts } from "./erasure.js";
import type { WritePolicy } from "./write-policy.js";

/** Options of a search across sessions. */
export interface StoreSearchOptions extends SearchOptions {
  /** Restrict hits to one session. */
  sessionId?: string;
  /** Restrict hits to these sessions (with `sessionId`, to the sessions in both). */
  sessionIds?: readonly string[];
  /**
   * Restrict hits to the sessions registered with this owner (with the other options, to the sessions in both);
   * a session without a registry row or owner is no owner's. Stores without a registry find nothing for it.
   */
  owner?: string;
}

/**
 * A backend holding many sessions (memory, SQLite, Postgres). Per-session access goes through `session(id)`,
 * which returns the reference-shaped {@link SessionProvider}; store-wide operations live here. The backends are
 * `SessionStore` (any valid message); `M` only types what a store of the app's own making hands out.
 */
export interface SessionStore<M extends SessionMessage = SessionMessage> {
  /** Backend name, e.g. "memory", "sqlite", "postgres". */
  readonly backend: string;
  /**
   * The storage contract bound to one session id (`""` = the default unnamed session); `binding` is how a Session
   * makes the provider it writes through (a store that ignores it gets its provider's writes prepared by the Session).
   */
  session(sessionId: string, binding?: SessionBinding): SessionProvider<M>;
  /** Full-text search across sessions (or one, with `sessionId`), best matches first. */
  searchMessages(query: string, options?: StoreSearchOptions): Promise<SearchResult<M>[]>;
  /** Releases connections or handles the store opened itself (a handle passed in by the user stays open). */
  close(): Promise<void>;
}

/** What a Session binds the provider it writes through to: its write policy, read at each write, applied first. */
export interface SessionBinding {
  readonly policy: () => WritePolicy;
}

/** True when `value` looks like a {@link SessionStore}. */
export function isSessionStore(value: unknown): value is SessionStore {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as SessionStore).session === "function" &&
    typeof (value as SessionStore).searchMessages === "function" &&
    typeof (value as SessionStore).backend === "string"
  );
}

/**
 * Durable key/value rows for context blocks and cached prompts (the reference's `cf_agents_context_blocks`).
 * Keys are namespaced by the caller, e.g. `memory_<sessionId>`, `_system_prompt_<sessionId>`.
 */
export interface BlockStore {
  /** The stored content, or null when the key was never written (an empty string is a value). */
  getBlock(key: string): Promise<string | null>;
  setBlock(key: string, content: string): Promise<void>;
  /** Removes keys; unknown keys are ignored. */
  deleteBlocks(keys: readonly string[]): Promise<void>;
}

/** One hit of an entry search. */
export interface EntryHit {
  key: string;
  content: string;
}

/** Full-text-searchable keyed entries per block label (the reference's `cf_agents_search_entries`). */
export interface EntryStore {
  /** Inserts or replaces the entry `key` of `label`; its old text is no longer found. */
  setEntry(label: string, key: string, content: string): Promise<void>;
  /** Best matches first, with the query language of {@link SessionStore.searchMessages}. */
  searchEntries(label: string, query: string, limit?: number): Promise<EntryHit[]>;
  countEntries(label: string): Promise<number>;
  /** Removes every entry of `label`. */
  deleteEntries(label: string): Promise<void>;
}

/** A store that can also hold context blocks and searchable entries (what auto-wiring needs). */
export interface ContextCapableStore extends SessionStore {
  readonly blocks: BlockStore;
  readonly entries: EntryStore;
}

/** True when the store can back auto-wired context blocks. */
export function hasContextStorage(store: SessionStore): store is ContextCapableStore {
  const candidate = store as Partial<ContextCapableStore>;
  return typeof candidate.blocks === "object" && typeof candidate.entries === "object";
}

// --- Attachments (offloaded media payloads) ---------------------------------------------------------------------

/** Totals of a store's attachment store: distinct payloads and their bytes (each counted once). */
export interface AttachmentStats {
  count: number;
  bytes: number;
}

/**
 * The content-addressed payloads a store offloaded from messages (see docs/ARCHITECTURE.md, "Attachments"):
 * each distinct payload is stored once under its SHA-256 and deleted with the last message row pointing at it.
 */
export interface AttachmentStore {
  /** Number and total bytes of the stored payloads. */
  stats(): Promise<AttachmentStats>;
  /** The bytes stored under a SHA-256 (hex), or null when no row points at such a payload. */
  get(hash: string): Promise<Uint8Array | null>;
}

/** A store that offloads media payloads into an {@link AttachmentStore} (memory, SQLite and Postgres). */
export interface AttachmentCapableStore extends SessionStore {
  readonly attachments: AttachmentStore;
}

/** True when the store has an {@link AttachmentStore}. */
export function hasAttachmentStore(store: SessionStore): store is AttachmentCapableStore {
  const attachments = (store as Partial<AttachmentCapableStore>).attachments;
  return typeof attachments === "object" && attachments !== null && typeof attachments.stats === "function";
}

// --- Session registry (SessionManager) -------------------------------------------------------------------------

/**
 * One registered session, in the reference's `assistant_sessions` row shape (snake_case) plus prompt-cache token
 * counters. Timestamps are ISO-8601 strings.
 */
export interface SessionInfo {
  id: string;
  name: string;
  parent_session_id: string | null;
  model: string | null;
  source: string | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  estimated_cost: number;
  end_reason: string | null;
  created_at: string;
  updated_at: string;
  /** Whose session it is (set when it is registered, never changed); absent when it has none. */
  owner?: string;
  /** True when the session is pinned (retention never erases it); absent when it is not. */
  pinned?: true;
}

/** A row to register (validated by the caller: the registry trusts its input, as {@link BlockStore} does). */
export interface NewSessionRecord {
  id: string;
  name: string;
  parentSessionId?: string | null | undefined;
  model?: string | null | undefined;
  source?: string | null | undefined;
  /** Whose session it is (an owner id, see store/owner.ts); none when null or omitted. */
  owner?: string | null | undefined;
}

/** Usage to add to a session's counters. */
export interface SessionUsage {
  inputTokens: number;
  outputTokens: number;
  cost: number;
  cacheReadTokens?: number | undefined;
  cacheWriteTokens?: number | undefined;
}

/** Paging of {@link SessionRegistry.list}. */
export interface SessionListOptions {
  /** At most this many rows (default: all). */
  limit?: number | undefined;
  /** Rows to skip first (default 0). */
  offset?: number | undefined;
  /** Only the sessions of this owner (an index range on the SQL stores: other owners' rows are not read). */
  owner?: string | undefined;
}

/** Options of {@link SessionRegistry.scan}. */
export interface SessionScanOptions {
  /** Rows read per statement (default 500, at most 10,000). */
  pageSize?: number | undefined;
  /** Only the sessions registered with this `source` (the agent runtime's are `"agent"`); default every session. */
  source?: string | undefined;
}

/**
 * The named sessions of a store and their lifecycle (what `SessionManager` needs). Every write bumps `updated_at`
 * and the row's activity order; unknown ids give `null` / `false`, never an error, so the caller decides.
 */
export interface SessionRegistry {
  /** Registers a session with zero counters; `CONFLICT` when the id is already registered. */
  create(record: NewSessionRecord): Promise<SessionInfo>;
  get(id: string): Promise<SessionInfo | null>;
  /** Newest activity first: `updated_at` descending, ties broken by the most recent write (a stable order). */
  list(options?: SessionListOptions): Promise<SessionInfo[]>;
  /**
   * Every registered session (of `source` only, when given: the SQL stores read only those, through an index on
   * (source, id)), in the store's order of ids, read in pages that go on after the last id (no offset): a page
   * costs the same wherever it lies, and a session registered throughout the scan is yielded exactly once,
   * however the others are touched, created or deleted meanwhile (those may or may not appear). For reading them
   * all; `list()` pages by activity, which moves under writes.
   */
  scan(options?: SessionScanOptions): AsyncIterable<SessionInfo>;
  /** Number of registered sessions (without reading them). */
  count(): Promise<number>;
  rename(id: string, name: string): Promise<SessionInfo | null>;
  /** Marks activity now; false when the id is not registered. */
  touch(id: string): Promise<boolean>;
  addUsage(id: string, usage: SessionUsage): Promise<SessionInfo | null>;
  /** Records why a session ended (e.g. `"compaction"`). */
  markEnded(id: string, reason: string): Promise<SessionInfo | null>;
  /**
   * Removes the row and everything stored for that session id — messages, overlays, search-index rows, its head —
   * plus the given context-block keys; true when a row was registered. Data of an unregistered id is removed too.
   */
  delete(id: string, options?: { blockKeys?: readonly string[] }): Promise<boolean>;
  /**
   * Erases everything of a session in one transaction (what `delete` removes, plus the session's change-log rows,
   * the search entries filed under `blockKeys`, and the payloads no other message links) and publishes `erased`;
   * answers the counts, or null when nothing was stored under the id or `condition` did not hold.
   */
  erase?(
    id: string,
    options?: { blockKeys?: readonly string[]; condition?: ErasureCondition },
  ): Promise<ErasureCounts | null>;
  /** Pins or unpins a session (a retention sweep never erases a pinned one); null when the id is not registered. */
  pin?(id: string, pinned: boolean): Promise<SessionInfo | null>;
}

/** A store with a session registry (memory, SQLite and Postgres all have one). */
export interface RegistryCapableStore extends SessionStore {
  readonly registry: SessionRegistry;
}

/** True when the store can back a `SessionManager`. */
export function hasSessionRegistry(store: SessionStore): store is RegistryCapableStore {
  const registry = (store as Partial<RegistryCapableStore>).registry;
  return typeof registry === "object" && registry !== null && typeof registry.list === "function";
}

// --- Transfer (lossless export and import) -----------------------------------------------------------------------

/** A session's header in a transfer: its registry row, exactly, and its latest leaf. */
export interface TransferSession {
  id: string;
  /** The registry row with its timestamps and usage counters; null for a session that is not registered. */
  info: SessionInfo | null;
  /** The latest leaf (the active branch's tip), or null when the session holds no messages. */
  leafId: string | null;
}

/** One stored message with its tree link and original time. */
export interface TransferMessage {
  id: string;
  /** The message it was appended under, or null for a root. */
  parentId: string | null;
  role: string;
  /** ISO-8601 time the message was stored (`toISOString()` form). */
  createdAt: string;
  /** The stored JSON of the message, verbatim. */
  content: string;
}

/** An offloaded payload a transferred message points at, sent once before the first message that needs it. */
export interface TransferAttachment {
  /** SHA-256 of `bytes`, hex (an import checks it). */
  hash: string;
  bytes: Uint8Array;
}

/**
 * One item of a session's transfer stream: the header first, then messages (parents first, each payload as an
 * `attachment` item before the first message pointing at it), then overlays.
 */
export type TransferItem =
  | { kind: "session"; session: TransferSession }
  | { kind: "attachment"; attachment: TransferAttachment }
  | { kind: "message"; message: TransferMessage }
  | { kind: "compaction"; compaction: StoredCompaction };

/** One store-wide row: a context block (cached prompts included) or a searchable entry of a search block. */
export type TransferRow =
  | { kind: "block"; key: string; content: string }
  | { kind: "entry"; label: string; key: string; content: string };

/** How many rows an import wrote and how many it found already present (ids are the identity). */
export interface ImportCounts {
  inserted: number;
  skipped: number;
}

/** What importing one session did. */
export interface SessionImportResult {
  sessionId: string;
  /** True when the registry row was written (false: absent from the stream, or already registered). */
  registered: boolean;
  messages: ImportCounts;
  compactions: ImportCounts;
}

/** The stored size of one session. */
export interface SessionFootprint {
  id: string;
  registered: boolean;
  messages: number;
  compactions: number;
  /** UTF-8 bytes of the stored message JSON. */
  bytes: number;
  /** The library's token estimate of the stored messages (every branch, overlays not applied). */
  tokens: number;
  leafId: string | null;
}

/**
 * Optional store capability: lossless, streaming export and import of whole sessions, so data moves between
 * backends with message ids, tree links, timestamps, overlays, registry rows and blocks intact. Nothing here
 * materialises a whole store: every listing is an async iterable read in pages. Imports are idempotent: a row
 * whose id is already stored is kept as it is and counted as skipped.
 */
export interface SessionTransfer {
  /**
   * Every registered session, oldest activity first, then every other session holding data, by id (also one
   * registered after the first part read past its place). Read in pages: a session written meanwhile moves behind
   * the read position and can be named again (the CLI skips repeats); one that held data or a registry row
   * throughout is never left out.
   */
  sessionIds(): AsyncIterable<string>;
  /** Sizes of one session, or null when nothing is stored or registered under the id. */
  footprint(sessionId: string): Promise<SessionFootprint | null>;
  /** One session: its header, its messages in storage order (parents first), its overlays oldest first. */
  exportSession(sessionId: string): AsyncIterable<TransferItem>;
  /**
   * Writes one session from a stream that starts with its header. A message's parent must already be stored
   * (`PARENT_NOT_FOUND` otherwise); when any message was inserted, the latest leaf becomes the header's.
   */
  importSession(items: AsyncIterable<TransferItem>): Promise<SessionImportResult>;
  /** Every context block by key (UTF-8 byte order), then every searchable entry in storage order. */
  exportRows(): AsyncIterable<TransferRow>;
  /** Writes blocks and entries whose keys are not stored yet. */
  importRows(rows: AsyncIterable<TransferRow>): Promise<ImportCounts>;
}

/** A store that can export and import sessions losslessly (memory, SQLite and Postgres). */
export interface TransferCapableStore extends SessionStore {
  readonly transfer: SessionTransfer;
}

/** True when the store offers {@link SessionTransfer}. */
export function hasTransfer(store: SessionStore): store is TransferCapableStore {
  const transfer = (store as Partial<TransferCapableStore>).transfer;
  return typeof transfer === "object" && transfer !== null && typeof transfer.exportSession === "function";
}
