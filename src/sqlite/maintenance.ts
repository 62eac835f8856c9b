import { closeSync, openSync, readSync, statSync } from "node:fs";
import { MissingDependencyError } from "../errors.js";
import { loadBetterSqlite3, loadNodeSqlite } from "../sql/engines/sqlite/better-sqlite3.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import { flushSearchIndex } from "../sql/search/sqlite-indexing.js";

/** What a path holds, as far as agent-session is concerned. */
export type SqliteFileKind = "missing" | "empty" | "agent-session" | "other-sqlite" | "not-sqlite";

const HEADER = "SQLite format 3\0";

interface ReadonlyDb {
  prepare(sql: string): { get(...params: string[]): unknown };
  close(): void;
}

// How long a probe waits for a lock, as a store's connection does (busyTimeoutMs). node:sqlite's default is 0: a
// probe that met another process's last connection checkpointing on close (a moment's exclusive lock) failed at
// once with "database is locked" (a CLI command run beside another one, seen in CI on Node 24).
const PROBE_BUSY_TIMEOUT_MS = 5000;

// A read-only connection, so probing someone else's database never changes it (no migration, no WAL switch).
// The same engine choice as openSqlite: node:sqlite where the runtime has it, else better-sqlite3.
function openReadonly(path: string): ReadonlyDb {
  const nodeSqlite = loadNodeSqlite();
  if (nodeSqlite) {
    return new nodeSqlite.DatabaseSync(path, {
      readOnly: true,
      timeout: PROBE_BUSY_TIMEOUT_MS,
    }) as ReadonlyDb;
  }
  let Database: new (file: string, options: object) => ReadonlyDb;
  try {
    Database = loadBetterSqlite3() as unknown as new (file: string, options: object) => ReadonlyDb;
  } catch (error) {
    throw new MissingDependencyError("better-sqlite3", `Reading SQLite on Node.js ${process.version}`, error);
  }
  return new Database(path, { readonly: true, fileMustExist: true, timeout: PROBE_BUSY_TIMEOUT_MS });
}

/**
 * Tells, without writing anything, whether `path` is missing, an empty file, an agent-session database, another
 * SQLite database, or not SQLite at all — so a read-only command never creates or migrates a file by mistake.
 */
export function probeSqliteFile(path: string): SqliteFileKind {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return "missing";
  }
  if (size === 0) return "empty";
  const header = Buffer.alloc(HEADER.length);
  const fd = openSync(path, "r");
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (header.toString("latin1") !== HEADER) return "not-sqlite";
  const db = openReadonly(path);
  try {
    const row = db
      .prepare("SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'agent_session_schema'")
      .get();
    return row ? "agent-session" : "other-sqlite";
  } finally {
    db.close();
  }
}

/** True when the SQLite file at `path` has a table with one of `names`; reads only (a read-only connection). */
export function sqliteHasTable(path: string, names: readonly string[]): boolean {
  const db = openReadonly(path);
  try {
    const found = db
      .prepare(
        "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name IN (SELECT value FROM json_each(?))",
      )
      .get(JSON.stringify(names));
    return found !== undefined;
  } finally {
    db.close();
  }
}

/** Bytes the database occupies on disk: the main file plus its write-ahead log. */
export function sqliteFileBytes(path: string): number {
  let total = 0;
  for (const file of [path, `${path}-wal`]) {
    try {
      total += statSync(file).size;
    } catch {
      // A missing WAL file simply means nothing is pending.
    }
  }
  return total;
}

/** Page counts of an open database: how much of it is in use and how much is free for reuse. */
export function sqlitePages(driver: SqlDriver): { pageSize: number; pages: number; freePages: number } {
  const number = (sql: string) =>
    Number(Object.values(driver.get<Record<string, unknown>>(sql) ?? {})[0] ?? 0);
  return {
    pageSize: number("PRAGMA page_size"),
    pages: number("PRAGMA page_count"),
    freePages: number("PRAGMA freelist_count"),
  };
}

/**
 * Returns freed space to the file system after large deletes. The schema never enabled `auto_vacuum`, so
 * `PRAGMA incremental_vacuum` would do nothing: this merges the search index (dropping deleted entries), runs a
 * full `VACUUM` (rewrites the file; needs free disk space about the database's size and blocks writers while it
 * runs) and truncates the WAL so the file really shrinks.
 */
export function reclaimSqliteSpace(driver: SqlDriver): void {
  flushSearchIndex(driver);
  driver.run("INSERT INTO agent_messages_fts (agent_messages_fts) VALUES ('optimize')");
  driver.run("VACUUM");
  driver.get("PRAGMA wal_checkpoint(TRUNCATE)");
}
