import { SqliteLegacyAgentTables } from "../../sqlite/agent-legacy.js";
import type { SqliteOptions, SqliteSource } from "../../sqlite/connection/open.js";
import { SqliteStore } from "../../sqlite/store.js";
import { LEGACY_AGENT_PREFIX } from "../../store/agent-legacy.js";
import { legacyMigration } from "./legacy.js";
import { StoreSessionStorage } from "./store.js";

/** Options of {@link SQLiteSessionStorage}: the store's connection settings plus the old tables' prefix. */
export interface SQLiteSessionStorageOptions extends SqliteOptions {
  /**
   * Prefix of the tables earlier releases wrote agent sessions to (default "agent_chat_"): when they exist, their
   * sessions are moved into the store on first use, once; the tables themselves are left untouched.
   */
  tablePrefix?: string;
}

/**
 * Agent sessions in a SQLite file (or `:memory:`, or a better-sqlite3 / node:sqlite handle) as ordinary sessions
 * of a {@link SqliteStore}: the CLI, the viewer, search and export see them. See {@link StoreSessionStorage}.
 */
export class SQLiteSessionStorage extends StoreSessionStorage {
  /** The store the sessions live in (the same file a `Session` or the CLI opens). */
  readonly sqlite: SqliteStore;

  constructor(source: SqliteSource = ":memory:", options: SQLiteSessionStorageOptions = {}) {
    const { tablePrefix = LEGACY_AGENT_PREFIX, ...storeOptions } = options;
    const store = new SqliteStore(source, storeOptions);
    let legacy: SqliteLegacyAgentTables;
    try {
      legacy = new SqliteLegacyAgentTables(store.driver, tablePrefix);
    } catch (error) {
      void store.close();
      throw error;
    }
    super(store, { ownsStore: true, prepare: legacyMigration(legacy, tablePrefix) });
    this.sqlite = store;
  }
}
