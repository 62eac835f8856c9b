import type { SqliteHandle, SqliteOptions } from "../sql/engines/sqlite/open.js";
import type { SqlTagSource } from "../sql/engines/sqlite/sql-tag-driver.js";
import { SqliteStore } from "./store.js";

// One store per user object, so many Sessions and providers on the same agent or handle share one migration.
const stores = new WeakMap<object, SqliteStore>();

/** The store for a user's database handle or `sql`-tag object, created on first use and then shared. */
export function sharedSqliteStore(
  source: SqliteHandle | SqlTagSource,
  options: SqliteOptions = {},
): SqliteStore {
  let store = stores.get(source);
  if (!store) {
    store = new SqliteStore(source, options);
    stores.set(source, store);
  }
  return store;
}
