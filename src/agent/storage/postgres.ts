import type { PostgresStoreOptions } from "../../postgres/schema.js";
import { PostgresStore } from "../../postgres/store.js";
import { createPgPool, type PostgresSource } from "../../sql/engines/postgres/client.js";
import { isPostgresConnection } from "../../sql/engines/postgres/reference-connection.js";
import { tableNames } from "../../sql/engines/postgres/tables.js";
import { StoreSessionStorage } from "./store.js";

/** Connection options handed to `new pg.Pool(options)` (connectionString, host, user, …). */
export type PgPoolOptions = Record<string, unknown>;

/** A pool, client, PGlite instance or `PostgresConnection` you own, a connection URL, or `pg.Pool` options. */
export type PostgresStorageSource = PostgresSource | PgPoolOptions;

/** Options of {@link PostgresSessionStorage}: the store's options (`schema`, `tablePrefix`, `prepare`, …). */
export type PostgresSessionStorageOptions = PostgresStoreOptions;

interface EndablePool {
  end(): Promise<void>;
  on?(event: "error", listener: (error: unknown) => void): unknown;
}

function isOwnConnection(source: unknown): source is PostgresSource {
  // Anything that is not an options object goes to the store, which refuses what it cannot use.
  if (typeof source !== "object" || source === null) return true;
  return typeof (source as { query?: unknown }).query === "function" || isPostgresConnection(source);
}

function poolFromOptions(options: PgPoolOptions): Promise<EndablePool & PostgresSource> {
  return createPgPool(undefined, options) as Promise<EndablePool & PostgresSource>;
}

/**
 * Agent sessions in PostgreSQL as ordinary sessions of a {@link PostgresStore} (same tables, migrations and
 * registry as `Session` / `SessionManager`); media is offloaded like every store message. See
 * {@link StoreSessionStorage}.
 */
export class PostgresSessionStorage extends StoreSessionStorage {
  private readonly pool: Promise<EndablePool | undefined>;

  constructor(source: PostgresStorageSource, options: PostgresSessionStorageOptions = {}) {
    // Bad table names are refused here, not on the first call, although the store itself is made later.
    tableNames(options);
    // Pool options make a pool this storage owns; every other source is the store's (a URL's pool is ended by it).
    const pool = isOwnConnection(source) ? Promise.resolve(undefined) : poolFromOptions(source);
    const store = pool.then((own) => new PostgresStore(own ?? (source as PostgresSource), options));
    super(store, { ownsStore: true });
    this.pool = pool.catch(() => undefined);
  }

  /** Closes the store (and ends the pool it opened from a URL or options); a connection you passed stays open. */
  override async close(): Promise<void> {
    await super.close();
    await (await this.pool)?.end();
  }
}
