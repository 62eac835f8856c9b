/**
 * What the parts of the SQLite backend (a session's provider, the agent step, the vector channel) need of their
 * store: a narrow view, so no part imports SqliteStore and the store imports its parts only.
 */

import type { SearchHit, StoreSearchOptions } from "../../contract/search.js";
import type { ProviderContext } from "../../store/provider.js";
import type { SqliteChangeLog } from "../change-log/sqlite.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";

/** A SqliteStore as its parts see it (not exported by any entry point). */
export interface SqliteBackend extends ProviderContext {
  readonly driver: SqlDriver;
  /** The change log shared with other processes, when the store was opened with `changeLog`. */
  readonly changeLog: SqliteChangeLog | undefined;
  /** The session's number (its head row), created when `create`; undefined for an unknown session. */
  sessionNum(sessionId: string, create: boolean): number | undefined;
  searchMessages(query: string, options?: StoreSearchOptions): Promise<SearchHit[]>;
}
