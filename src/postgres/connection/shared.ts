import { SessionError } from "../../errors.js";
import type { PostgresStoreOptions } from "../schema.js";
import type { PostgresStore } from "../store.js";
import type { PostgresSource } from "./client.js";

// One store per connection (and table options), so many providers on the same Pool, Client or PGlite share one
// migration check; a connection string gets one Pool for the whole process.
const byObject = new WeakMap<object, Map<string, PostgresStore>>();
const byUrl = new Map<string, PostgresStore>();

type StoreClass = new (source: PostgresSource, options: PostgresStoreOptions) => PostgresStore;

// The store class, handed in by store.ts when it loads. Importing it here would close a runtime cycle: the store
// builds session providers, and a provider's reference constructor (a client or URL) builds a shared store.
let storeClass: StoreClass | undefined;

/** @internal called once by store.ts: the class `sharedPostgresStore` creates and recognises. */
export function provideStoreClass(value: StoreClass): void {
  storeClass = value;
}

/**
 * The store for a connection or connection string, created on first use and then shared until it is closed; a
 * store is used as is.
 */
export function sharedPostgresStore(
  source: PostgresSource | PostgresStore,
  options: PostgresStoreOptions = {},
): PostgresStore {
  // Every entry that exports a provider loads store.ts, so this only fails for a deep import of a provider module.
  if (!storeClass) {
    throw new SessionError(
      "UNSUPPORTED",
      "Import Postgres providers from agent-session/postgres (it loads the store)",
    );
  }
  if (source instanceof storeClass) return source;
  const create = storeClass;
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
