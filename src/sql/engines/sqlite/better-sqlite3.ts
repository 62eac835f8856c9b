import type BetterSqlite3 from "better-sqlite3";
import { nodeRequire } from "../../../runtime/load.js";

// Node's require on first use, never at import: a Worker has none and opens only `sql`-tag sources. Not named
// `require`: a bundler that puts a `const require = createRequire(…)` banner above an ESM bundle (eve's does) would
// then see it declared twice in one scope and refuse the bundle.
function requireOnce(id: string): unknown {
  return nodeRequire("SQLite storage on a file path")(id);
}

/** The better-sqlite3 `Database` constructor for this Node.js version. */
export type BetterSqlite3Constructor = typeof BetterSqlite3;

/** The part of `node:sqlite` agent-session uses. */
export interface NodeSqliteModule {
  DatabaseSync: new (file: string, options?: object) => unknown;
}

/**
 * better-sqlite3, an optional peer dependency (node:sqlite serves Node >= 22.13 without a native build). Release
 * 12 is the last one that runs on Node 20, but on recent Node 24 its finalizers abort the process when a database
 * is garbage-collected; 13 fixes that and needs Node >= 22. This repository's own tests install 13 under the alias
 * `better-sqlite3-node22`, tried first on Node >= 22; an application simply installs `better-sqlite3`.
 */
export function loadBetterSqlite3(): BetterSqlite3Constructor {
  const major = Number(process.versions.node.split(".")[0]);
  const order = major >= 22 ? ["better-sqlite3-node22", "better-sqlite3"] : ["better-sqlite3"];
  let lastError: unknown;
  for (const name of order) {
    try {
      return requireOnce(name) as BetterSqlite3Constructor;
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/**
 * `node:sqlite`, or undefined where the runtime lacks it (Node < 22.13 without a flag). Node 22 prints "SQLite is
 * an experimental feature" on first load (Node 24 no longer does); agent-session picks the engine, not the
 * application, so that one warning is filtered while the module loads — every other warning passes through.
 */
export function loadNodeSqlite(): NodeSqliteModule | undefined {
  // A Worker has no process (nor node:sqlite); the caller then reports that a file path needs Node.js.
  if (typeof process === "undefined") return undefined;
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === "string" ? warning : warning.message;
    const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    if (type === "ExperimentalWarning" && text.startsWith("SQLite is an experimental feature")) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return requireOnce("node:sqlite") as NodeSqliteModule;
  } catch (error) {
    // Absent from this runtime is an answer; any other failure is not.
    if ((error as { code?: string }).code === "ERR_UNKNOWN_BUILTIN_MODULE") return undefined;
    throw error;
  } finally {
    process.emitWarning = emitWarning;
  }
}
