import type { SearchOptions, SearchResult, SessionProvider } from "../types.js";

/** Options of a search across sessions. */
export interface StoreSearchOptions extends SearchOptions {
  /** Restrict hits to one session. */
  sessionId?: string;
}

/**
 * A backend holding many sessions (memory, SQLite, Postgres). Per-session access goes through `session(id)`,
 * which returns the reference-shaped {@link SessionProvider}; store-wide operations live here.
 */
export interface SessionStore {
  /** Backend name, e.g. "memory", "sqlite", "postgres". */
  readonly backend: string;
  /** The storage contract bound to one session id (`""` = the default unnamed session). */
  session(sessionId: string): SessionProvider;
  /** Full-text search across sessions (or one, with `sessionId`), best matches first. */
  searchMessages(query: string, options?: StoreSearchOptions): Promise<SearchResult[]>;
  /** Releases connections or handles the store opened itself (a handle passed in by the user stays open). */
  close(): Promise<void>;
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
