import { PostgresLegacyAgentTables } from "../../postgres/agent-legacy.js";
import { createPgPool, type PostgresSource } from "../../postgres/connection/client.js";
import { isPostgresConnection } from "../../postgres/connection/reference-connection.js";
import type { PostgresStoreOptions } from "../../postgres/schema.js";
import { PostgresStore } from "../../postgres/store.js";
import { assertLegacyPrefix, LEGACY_AGENT_PREFIX } from "../../store/agent-legacy.js";
import { legacyMigration } from "./legacy.js";
import { StoreSessionStorage } from "./store.js";

/** Connection options handed to `new pg.Pool(options)` (connectionString, host, user, …). */
export type PgPoolOptions = Record<string, unknown>;

/** A pool, client, PGlite instance or `PostgresConnection` you own, a connection URL, or `pg.Pool` options. */
export type PostgresStorageSource = PostgresSource | PgPoolOptions;

/** Options of {@link PostgresSessionStorage}: the store's options plus the old tables' prefix. */
export interface PostgresSessionStorageOptions extends Omit<PostgresStoreOptions, "tablePrefix"> {
  /** The store's `tablePrefix` (prefix of every store table and index); default none. */
  storeTablePrefix?: string;
  /**
   * Prefix of the tables earlier releases wrote agent sessions to (default "agent_chat_"): when they exist, their
   * sessions are moved into the store on first use, once; the tables themselves are left untouched.
   */
  tablePrefix?: string;
}

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
    const { tablePrefix = LEGACY_AGENT_PREFIX, storeTablePrefix, ...rest } = options;
    assertLegacyPrefix(tablePrefix);
    const storeOptions: PostgresStoreOptions =
      storeTablePrefix === undefined ? rest : { ...rest, tablePrefix: storeTablePrefix };
    // Pool options make a pool this storage owns; every other source is the store's (a URL's pool is ended by it).
    const pool = isOwnConnection(source) ? Promise.resolve(undefined) : poolFromOptions(source);
    const store = pool.then((own) => new PostgresStore(own ?? (source as PostgresSource), storeOptions));
    const legacy = new PostgresLegacyAgentTables(async () => (await store).ready(), tablePrefix);
    super(store, { ownsStore: true, prepare: legacyMigration(legacy, tablePrefix) });
    this.pool = pool.catch(() => undefined);
  }

  /** Closes the store (and ends the pool it opened from a URL or options); a connection you passed stays open. */
  override async close(): Promise<void> {
    await super.close();
    await (await this.pool)?.end();
  }
}
