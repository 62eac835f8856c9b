import type { SqliteOptions, SqliteSource } from "../../sql/engines/sqlite/open.js";
import { SqliteStore } from "../../sqlite/store.js";
import { StoreSessionStorage } from "./store.js";

/** Options of {@link SQLiteSessionStorage}: the store's connection settings. */
export type SQLiteSessionStorageOptions = SqliteOptions;

/**
 * Agent sessions in a SQLite file (or `:memory:`, or a better-sqlite3 / node:sqlite handle) as ordinary sessions
 * of a {@link SqliteStore}: the CLI, the viewer, search and export see them. See {@link StoreSessionStorage}.
 */
export class SQLiteSessionStorage extends StoreSessionStorage {
  /** The store the sessions live in (the same file a `Session` or the CLI opens). */
  readonly sqlite: SqliteStore;

  constructor(source: SqliteSource = ":memory:", options: SQLiteSessionStorageOptions = {}) {
    const store = new SqliteStore(source, options);
    super(store, { ownsStore: true });
    this.sqlite = store;
  }
}
