import type { SqlTagSource } from "./driver.js";
import type { SqliteHandle } from "./open.js";
import { SqliteSessionProvider } from "./session-provider.js";
import { sharedSqliteStore } from "./shared.js";

/**
 * The reference's SQLite session provider: `new AgentSessionProvider(this, sessionId)` on an Agent / Durable
 * Object (anything with a `sql` tag) or on a better-sqlite3 / node:sqlite handle.
 */
export class AgentSessionProvider extends SqliteSessionProvider {
  constructor(agent: SqlTagSource | SqliteHandle, sessionId = "") {
    super(sharedSqliteStore(agent), sessionId);
  }
}
