/**
 * The reference's Postgres classes, each made from a client (a pg Pool or Client, a PGlite instance, a connection
 * string, a `PostgresConnection`) or a store: a session's provider, and the generic writable and searchable blocks
 * (`src/context/providers.ts`), over the store shared per connection. Only the reference's Postgres-specific
 * answers live here: a block's label is fixed at construction, and a search that matches nothing says so.
 */

import type { ToolOutputLimits } from "../context/output.js";
import { BlockContextProvider, EntrySearchProvider } from "../context/providers.js";
import { assertSessionId } from "../message/ids.js";
import type { PostgresSource } from "../sql/engines/postgres/client.js";
import { assertBlockKey, assertStoredKey } from "../store/keys.js";
import type { PostgresStoreOptions } from "./schema.js";
import { PostgresStoreProvider } from "./session-provider.js";
import { sharedPostgresStore } from "./shared.js";
import type { PostgresStore } from "./store.js";

/**
 * The storage contract of one session in Postgres, made as the reference makes it: `client` is a pg Pool or
 * Client, a PGlite instance, a connection string or a {@link PostgresStore}; the tables are created on first use
 * and one store is shared per connection.
 */
export class PostgresSessionProvider extends PostgresStoreProvider {
  /** The store this provider reads and writes through. */
  readonly store: PostgresStore;

  constructor(client: PostgresSource | PostgresStore, sessionId = "", options: PostgresStoreOptions = {}) {
    // Before the store is made, so a bad id opens no pool.
    assertSessionId(sessionId);
    const store = sharedPostgresStore(client, options);
    super(store, sessionId);
    this.store = store;
  }
}

// The reference's PostgresSearchProvider answers a search without hits with this text, not null.
const NO_RESULTS = "No results found.";

/**
 * A writable context block stored as one row keyed by `label` (required, and fixed: `init` keeps it, as the
 * reference's PostgresContextProvider).
 */
export class PostgresContextProvider extends BlockContextProvider {
  constructor(
    client: PostgresSource | PostgresStore,
    readonly label: string,
    options: PostgresStoreOptions = {},
  ) {
    // Checked here, not at the first write, because the label is the row's key for the provider's lifetime.
    assertBlockKey(label, "label");
    super(sharedPostgresStore(client, options).blocks, label);
  }
}

/**
 * A searchable block of keyed entries (label from the constructor, else from `init`). `search` uses the
 * library's query language and returns up to 10 hits as `[key]\n<content>` separated by blank lines.
 */
export class PostgresSearchProvider extends EntrySearchProvider {
  constructor(client: PostgresSource | PostgresStore, label?: string, options: PostgresStoreOptions = {}) {
    if (label !== undefined) assertStoredKey(label, "A label", "label");
    super(sharedPostgresStore(client, options).entries, label);
  }

  /** The hits, `"No results found."` when nothing matches, and null for a blank query (the reference's answers). */
  override async search(query: string, limits?: ToolOutputLimits): Promise<string | null> {
    if (query.trim().length === 0) return null;
    return (await super.search(query, limits)) ?? NO_RESULTS;
  }
}
