import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";

const require = createRequire(import.meta.url);

/** The better-sqlite3 `Database` constructor for this Node.js version. */
export type BetterSqlite3Constructor = typeof BetterSqlite3;

/**
 * better-sqlite3 12 is the last release that runs on Node 20, but on recent Node 24 its finalizers abort the
 * process when a database or statement is garbage-collected (`Assertion failed: (env) != nullptr`); release 13
 * fixes that and needs Node >= 22. Both are dependencies (13 under the alias `better-sqlite3-node22`, shipped
 * with prebuilt N-API binaries) and the right one is chosen here, falling back to the other if it cannot load.
 */
export function loadBetterSqlite3(): BetterSqlite3Constructor {
  const major = Number(process.versions.node.split(".")[0]);
  const order =
    major >= 22 ? ["better-sqlite3-node22", "better-sqlite3"] : ["better-sqlite3", "better-sqlite3-node22"];
  let firstError: unknown;
  for (const name of order) {
    try {
      return require(name) as BetterSqlite3Constructor;
    } catch (error) {
      firstError ??= error;
    }
  }
  throw firstError;
}
