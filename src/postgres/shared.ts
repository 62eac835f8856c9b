import type { PostgresSource } from "../sql/engines/postgres/client.js";
import type { PostgresStoreOptions } from "./schema.js";
import { PostgresStore } from "./store.js";

// One store per connection (and table options), so many providers on the same Pool, Client or PGlite share one
// migration check; a connection string gets one Pool for the whole process.
const byObject = new WeakMap<object, Map<string, PostgresStore>>();
const byUrl = new Map<string, PostgresStore>();

/**
 * The store for a connection or connection string, created on first use and then shared until it is closed; a
 * store is used as is.
 */
export function sharedPostgresStore(
  source: PostgresSource | PostgresStore,
  options: PostgresStoreOptions = {},
): PostgresStore {
  if (source instanceof PostgresStore) return source;
  const create = PostgresStore;
  const key = `${options.schema ?? ""}\u0000${options.tablePrefix ?? ""}`;
  if (typeof source === "string") {
    const urlKey = `${source}\u0001${key}`;
    let store = byUrl.get(urlKey);
    // A closed store cannot reopen; the next provider on the same URL gets a fresh one instead of `CLOSED`.
    if (!store || store.isClosed) {
      store = new create(source, options);
      byUrl.set(urlKey, store);
    }
    return store;
  }
  // No object to key the cache on (undefined, a number): the store's constructor refuses it with INVALID_ARGUMENT.
  if (typeof source !== "object" || source === null) return new create(source, options);
  const connection = source as PostgresSource & object;
  let stores = byObject.get(connection);
  if (!stores) {
    stores = new Map();
    byObject.set(connection, stores);
  }
  let store = stores.get(key);
  if (!store || store.isClosed) {
    store = new create(connection, options);
    stores.set(key, store);
  }
  return store;
}
