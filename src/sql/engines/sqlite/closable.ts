import { SessionError } from "../../../errors.js";
import type { SqlDriver } from "./driver.js";

/**
 * The driver a store hands to its parts, refusing every statement once the store is closed with `CLOSED`. Without
 * it a closed store answered `STORAGE` "connection is not open" (better-sqlite3), or kept working on a handle the
 * caller owns and therefore stays open.
 */
export function closableDriver(driver: SqlDriver, name: string): { driver: SqlDriver; close(): void } {
  let closed = false;
  const open = (): SqlDriver => {
    if (closed) throw new SessionError("CLOSED", `This ${name} was closed`);
    return driver;
  };
  return {
    close: () => {
      closed = true;
    },
    driver: {
      name: driver.name,
      configurable: driver.configurable,
      maxValueBytes: driver.maxValueBytes,
      // Per-connection caches (family-cache.ts) must find one connection under every wrapper of it.
      ...(driver.handle === undefined ? {} : { handle: driver.handle }),
      all: (sql, params) => open().all(sql, params),
      column: (sql, params) => open().column(sql, params),
      tuples: (sql, params) => open().tuples(sql, params),
      get: (sql, params) => open().get(sql, params),
      run: (sql, params) => open().run(sql, params),
      ...(driver.runChanges === undefined
        ? {}
        : { runChanges: (sql, params) => open().runChanges!(sql, params) }),
      transaction: (fn) => open().transaction(fn),
      read: (fn) => open().read(fn),
      close: () => driver.close(),
    },
  };
}
