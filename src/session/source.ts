import type { SessionMessage } from "../contract/message.js";
import type { SessionProvider } from "../contract/provider.js";
import { isSessionStore, type SessionStore } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { isSqliteHandle, type SqliteOptions, type SqliteSource } from "../sql/engines/sqlite/open.js";
import { isSqlTagSource } from "../sql/engines/sqlite/sql-tag-driver.js";
import { sharedSqliteStore } from "../sqlite/shared.js";
import { SqliteStore } from "../sqlite/store.js";

/** Anything a Session can be created on: a store, a SessionProvider, a SQLite path/handle, or a `sql`-tag object. */
export type SessionSource = SessionStore | SessionProvider | SqliteSource;

/** True when `value` implements the per-session storage contract. */
export function isSessionProvider(value: unknown): value is SessionProvider {
  const candidate = value as Partial<SessionProvider> | null;
  return (
    typeof candidate === "object" &&
    candidate !== null &&
    typeof candidate.appendMessage === "function" &&
    typeof candidate.getHistory === "function" &&
    typeof candidate.getMessage === "function"
  );
}

/** Where a Session's storage comes from, after looking at the source once (`M`: the Session's message type). */
export type ResolvedSource<M extends SessionMessage = SessionMessage> =
  | { kind: "store"; store: SessionStore<M>; owned: boolean }
  | { kind: "provider"; provider: SessionProvider<M> };

/** Classifies a source (stores and providers as given; SQLite sources opened, sharing one store per object). */
export function resolveSource(source: SessionSource, options: SqliteOptions = {}): ResolvedSource {
  if (isSessionStore(source)) return { kind: "store", store: source, owned: false };
  if (typeof source === "string")
    return { kind: "store", store: new SqliteStore(source, options), owned: true };
  if (isSqlTagSource(source) || isSqliteHandle(source)) {
    return { kind: "store", store: sharedSqliteStore(source, options), owned: false };
  }
  if (isSessionProvider(source)) return { kind: "provider", provider: source };
  throw new SessionError(
    "INVALID_ARGUMENT",
    "Session.create needs a SQLite path, a database handle, an object with a sql tag, a SessionStore or a SessionProvider",
    { issues: [{ path: "source", rule: "type" }] },
  );
}
