// Optional store capability: the named sessions of a store and their counters (what SessionManager needs).
import type { SessionStore } from "./store.js";

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
  /** ISO-8601 time the session was registered, UTC (`toISOString()` form). */
  created_at: string;
  /** ISO-8601 time of the session's last write, UTC (`toISOString()` form). */
  updated_at: string;
  /** Whose session it is (set when it is registered, never changed); absent when it has none. */
  owner?: string;
  /** True when the session is pinned (retention never erases it); absent when it is not. */
  pinned?: true;
  /**
   * True when the name is sealed (its owner has an encryption key) and this store cannot open it (opened without
   * its keyring, or a keyring without the owner's key): `name` is then "" (docs/PRIVACY.md, "Session names").
   */
  nameSealed?: true;
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
  /**
   * Destroys an owner's encryption key (crypto-shredding: its keyring's `forget`) and the store's record of it;
   * erasing an owner calls it last. Present on a store opened with a keyring.
   */
  forgetKey?(owner: string): Promise<void>;
  /**
   * The owner's keyed digests (HMAC-SHA256 under its blind-index key, docs/PRIVACY.md "Ids derived from content"),
   * the current key's first, then each previous key's while a rotation is under way; none for an owner stored in
   * clear. What a door derives an id from a user's content with, so the id confirms no guess of it. Present on the
   * SQL stores; a store without it keeps no owner's content sealed (the door then digests in clear).
   */
  ownerDigests?(owner: string): Promise<OwnerDigest[]>;
}

/** A keyed digest of one owner (see {@link SessionRegistry.ownerDigests}): the text's HMAC, hex. */
export type OwnerDigest = (text: string) => string;

/** How many rows of each kind an erasure removed. */
export interface ErasureCounts {
  /** Registry rows (0 for a session that had stored data but no registry row). */
  sessions: number;
  /** Messages, on every branch. */
  messages: number;
  /** Overlays (compaction summaries). */
  compactions: number;
  /** Vector-channel rows of those messages (0 on a store without the vector channel). */
  vectors: number;
  /** Context blocks of the session's keys (auto-wired blocks, the cached prompt, an agent session's header). */
  blocks: number;
  /** Search entries filed under the session's block keys. */
  entries: number;
  /** Offloaded payloads no other message links any more. */
  attachments: number;
  /** Change-log rows of the session (the `erased` row the erasure logs itself is not counted). */
  changes: number;
  /** Facts with a source in the session, whatever their scope (0 on a store without facts). */
  facts: number;
}

/** The receipt of an erasure: the sessions erased and the counts summed over them. */
export interface ErasureReceipt extends ErasureCounts {
  /** The ids of the erased sessions. */
  sessionIds: string[];
  /** LangGraph store items of the owner that `eraseOwner` deleted (absent when none). */
  items?: number;
}

/** A condition an erasure re-checks in its own transaction (a retention sweep's); unmet: nothing is erased. */
export interface ErasureCondition {
  /** Erase only when the session's last activity (`updated_at`) is before this ISO time. */
  inactiveBefore?: string;
  /** Erase only when the session is not pinned. */
  unpinned?: boolean;
  /**
   * Erase only when the session is not among its owner's `keepNewest` newest (by last activity, ties by write
   * order, as `list({ owner })` orders them), read in the erasing transaction; a session without an owner is not
   * counted. A retention sweep's `keepNewestPerOwner`: sweepers and writers racing it cannot make it erase one.
   */
  keepNewest?: number;
  /**
   * Postgres: skip a session whose registry row another transaction holds (`FOR UPDATE SKIP LOCKED`) rather than
   * wait for it: a concurrent sweeper is erasing it.
   */
  skipLocked?: boolean;
  /** Erase only when the registry row is this owner's (an owner-scoped caller's, checked with the erasure). */
  owner?: string;
  /** Erase only when the registry row has this source (`"agent"`: an agent storage's own sessions). */
  source?: string;
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
