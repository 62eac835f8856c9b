/**
 * The reference's SQLite-named classes (Cloudflare's `agents/experimental/memory/session`): a session provider, a
 * writable block and a searchable block on an Agent / Durable Object (anything with a `sql` tag), a SQLite handle
 * or a store. Each is the generic class over the one store shared per user object (see shared.ts).
 */
import { BlockContextProvider, EntrySearchProvider } from "../context/providers.js";
import { type ContextCapableStore, hasContextStorage } from "../contract/context.js";
import { isSessionStore, type SessionStore } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { isSqliteHandle, type SqliteHandle } from "../sql/engines/sqlite/open.js";
import { isSqlTagSource, type SqlTagSource } from "../sql/engines/sqlite/sql-tag-driver.js";
import { SqliteStoreProvider } from "./session-provider.js";
import { sharedSqliteStore } from "./shared.js";

/** Where built-in providers keep their rows: an Agent / `sql`-tag object, a SQLite handle, or a store. */
export type ProviderSource = SqlTagSource | SqliteHandle | SessionStore;

function contextStore(source: ProviderSource): ContextCapableStore {
  if (isSessionStore(source)) {
    if (hasContextStorage(source)) return source;
    throw new SessionError("UNSUPPORTED", `The ${source.backend} store cannot hold context blocks`);
  }
  if (isSqlTagSource(source) || isSqliteHandle(source)) return sharedSqliteStore(source);
  throw new SessionError(
    "INVALID_ARGUMENT",
    "A context provider needs an object with a sql tag, a SQLite handle or a store",
    { issues: [{ path: "source", rule: "type" }] },
  );
}

/**
 * The reference's SQLite session provider: `new AgentSessionProvider(this, sessionId)` on an Agent / Durable
 * Object (anything with a `sql` tag) or on a better-sqlite3 / node:sqlite handle.
 */
export class AgentSessionProvider extends SqliteStoreProvider {
  constructor(agent: SqlTagSource | SqliteHandle, sessionId = "") {
    super(sharedSqliteStore(agent), sessionId);
  }
}

/** The reference's SQLite-backed writable block: `new AgentContextProvider(this, "memory")`. */
export class AgentContextProvider extends BlockContextProvider {
  constructor(source: ProviderSource, label?: string) {
    super(contextStore(source).blocks, label);
  }
}

/** The reference's FTS-backed searchable block: `new AgentSearchProvider(this)`. */
export class AgentSearchProvider extends EntrySearchProvider {
  constructor(source: ProviderSource) {
    super(contextStore(source).entries);
  }
}
