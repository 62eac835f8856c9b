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
