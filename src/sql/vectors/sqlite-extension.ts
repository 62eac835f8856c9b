import { MissingDependencyError } from "../../errors.js";
import { importOptional } from "../../runtime/load.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";

interface ExtensionHandle {
  loadExtension?(path: string): unknown;
  /** node:sqlite: refused unless the database was opened with `allowExtension: true`. */
  enableLoadExtension?(allow: boolean): unknown;
}

const FEATURE = "The sqlite-vec index of vector recall on SQLite";
const PLAIN_HINT =
  'only that index needs it: the store option vectorIndex: "plain" (the CLI\'s embed --plain) keeps the vectors ' +
  "in a plain table, which works without the package";

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
    const vec = await importOptional<{ getLoadablePath(): string }>("sqlite-vec", FEATURE).catch(
      (error: unknown) => {
        // Said after the install command, so nobody reads the plain table as needing the package too.
        throw new MissingDependencyError("sqlite-vec", FEATURE, (error as Error).cause ?? error, PLAIN_HINT);
      },
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
