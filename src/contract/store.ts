// A backend holding many sessions, and the write policy a Session binds the providers it writes through to.
import type { SessionMessage } from "./message.js";
import type { SessionProvider } from "./provider.js";
import type { SearchHit, StoreSearchOptions, WithFactHits } from "./search.js";

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
  /**
   * Full-text search across sessions (or one, with `sessionId`), best matches first. A built-in store also takes
   * `facts: "hits"` ({@link WithFactHits}; its own type says so): then its facts that rank come among the turns.
   */
  searchMessages(query: string, options?: StoreSearchOptions): Promise<SearchHit<M>[]>;
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

/** What a store or a Session may enforce on every message written through it. */
export interface WritePolicyOptions {
  /**
   * Metadata keys only the server may set: stripped from the `metadata` of writes marked `{ source: "client" }`,
   * with an own `__proto__` key that could hide them (kept on server writes, the default).
   */
  reservedMetadataKeys?: readonly string[];
  /**
   * Largest message in UTF-8 bytes of its JSON (`metadata` included); a larger one is refused with `TOO_LARGE`,
   * never truncated. Default: no cap.
   */
  maxMessageBytes?: number;
}

/** A validated write policy. */
export interface WritePolicy {
  reservedMetadataKeys: readonly string[];
  maxMessageBytes: number;
}
