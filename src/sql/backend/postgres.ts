/**
 * What the parts of the Postgres backend (a session's provider, the agent step, the vector channel) need of their
 * store: a narrow view, so no part imports PostgresStore and the store imports its parts only.
 */

import type { SearchHit, StoreSearchOptions } from "../../contract/search.js";
import type { ProviderContext } from "../../store/provider.js";
import type { PostgresChangeLog } from "../change-log/postgres.js";
import type { Executor } from "../engines/postgres/client.js";
import type { KeyedTables } from "../sealing/postgres.js";

/** A PostgresStore as its parts see it (not exported by any entry point). */
export interface PostgresBackend extends ProviderContext {
  /** The resolved table names (schema and prefix applied). */
  readonly tables: KeyedTables;
  /** The change log shared with other processes and connections, when the store was opened with `changeLog`. */
  readonly changeLog: PostgresChangeLog | undefined;
  /** The connection, once the schema is migrated. */
  ready(): Promise<Executor>;
  searchMessages(query: string, options?: StoreSearchOptions): Promise<SearchHit[]>;
}
