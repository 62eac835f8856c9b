/**
 * `agent-session/postgres`: sessions, context blocks and searchable entries in PostgreSQL or PGlite. `pg` and
 * `@electric-sql/pglite` are optional peers: pass your own Pool / Client / PGlite instance, or a connection
 * string (then `pg` is loaded on first use).
 */

export { PostgresBlockStore, PostgresEntryStore } from "../sql/context-store/postgres.js";
export type {
  PostgresQueryable,
  PostgresQueryable as PgClientLike,
  PostgresSource,
  PostgresSource as PostgresClient,
} from "../sql/engines/postgres/client.js";
export type {
  PostgresConnection,
  PostgresConnectionArg,
} from "../sql/engines/postgres/reference-connection.js";
export type { PostgresPurgeMode, PostgresPurgeOptions } from "../sql/purge/postgres.js";
export { PostgresContextProvider, PostgresSearchProvider, PostgresSessionProvider } from "./reference.js";
export { PostgresSessionRegistry } from "./registry.js";
export { POSTGRES_SCHEMA_VERSION, type PostgresStoreOptions } from "./schema.js";
export { PostgresStoreProvider } from "./session-provider.js";
export { PostgresStore } from "./store.js";
