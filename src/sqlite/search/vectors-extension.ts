import { importOptional } from "../../runtime/load.js";
import type { SqlDriver } from "../connection/driver.js";

interface ExtensionHandle {
  loadExtension?(path: string): unknown;
  /** node:sqlite: refused unless the database was opened with `allowExtension: true`. */
  enableLoadExtension?(allow: boolean): unknown;
}

// Connections sqlite-vec is loaded into: an extension is loaded once per connection, whichever store asks.
const loaded = new WeakSet<object>();

/**
 * Loads sqlite-vec into the store's connection: false where the connection cannot load extensions at all (a `sql`
 * tag / Durable Object, node:sqlite opened without `allowExtension`), so the caller uses the plain table; a
 * `MissingDependencyError` ("npm install sqlite-vec") where it could but the package is not installed.
 */
export async function loadSqliteVec(driver: SqlDriver): Promise<boolean> {
  const handle = driver.handle as ExtensionHandle | undefined;
  if (driver.name === "sql-tag" || !handle || typeof handle.loadExtension !== "function") return false;
  if (loaded.has(handle)) return true;
  const nodeSqlite = typeof handle.enableLoadExtension === "function";
  if (nodeSqlite) {
    try {
      handle.enableLoadExtension?.(true);
    } catch {
      return false;
    }
  }
  try {
    const vec = await importOptional<{ getLoadablePath(): string }>(
      "sqlite-vec",
      'Vector recall on SQLite (or the store option vectorIndex: "plain")',
    );
    if (loaded.has(handle)) return true;
    handle.loadExtension(vec.getLoadablePath());
    loaded.add(handle);
    return true;
  } finally {
    // Loading stays possible only for as long as it takes: SQL cannot load a library through this connection.
    if (nodeSqlite) handle.enableLoadExtension?.(false);
  }
}
