import type { PostgresSource } from "./client.js";
import type { PostgresStoreOptions } from "./schema.js";
import { PostgresStore } from "./store.js";

// One store per connection (and table options), so many providers on the same Pool, Client or PGlite share one
// migration check; a connection string gets one Pool for the whole process.
const byObject = new WeakMap<object, Map<string, PostgresStore>>();
const byUrl = new Map<string, PostgresStore>();

/** The store for a connection or connection string, created on first use and then shared; a store is used as is. */
export function sharedPostgresStore(
  source: PostgresSource | PostgresStore,
  options: PostgresStoreOptions = {},
): PostgresStore {
  if (source instanceof PostgresStore) return source;
  const key = `${options.schema ?? ""}\u0000${options.tablePrefix ?? ""}`;
  if (typeof source === "string") {
    const urlKey = `${source}\u0001${key}`;
    let store = byUrl.get(urlKey);
    if (!store) {
      store = new PostgresStore(source, options);
      byUrl.set(urlKey, store);
    }
    return store;
  }
  let stores = byObject.get(source);
  if (!stores) {
    stores = new Map();
    byObject.set(source, stores);
  }
  let store = stores.get(key);
  if (!store) {
    store = new PostgresStore(source, options);
    stores.set(key, store);
  }
  return store;
}
