import { z } from "zod";
import type { WritePolicyOptions } from "../../../contract/store.js";
import { MissingDependencyError, SessionError } from "../../../errors.js";
import { byteCap } from "../../../schema/limits.js";
import { parseInput } from "../../../schema/parse.js";
import { numberWhere, refusedBy } from "../../../schema/rules.js";
import { rule } from "../../../schema/to-session-error.js";
import type { QueryLimits } from "../../../search/limits.js";
import type { VectorStoreOptions } from "../../../search/vectors/types.js";
import { type Keyring, keyringSchema } from "../../../store/crypto/keyring.js";
import type { ChangeLogOptions } from "../../../store/feed/change-rows.js";
import { loadBetterSqlite3, loadNodeSqlite } from "./better-sqlite3.js";
import { retryWhileBusy } from "./busy.js";
import { PreparedDriver, type SqlDriver } from "./driver.js";
import { isSqlTagSource, SqlTagDriver, type SqlTagSource } from "./sql-tag-driver.js";

/** Which engine opens a SQLite file path. */
export type SqliteDriverName = "better-sqlite3" | "node:sqlite";

/** Options for opening SQLite storage (and the write policy every session of the store enforces). */
export interface SqliteOptions extends WritePolicyOptions, VectorStoreOptions {
  /**
   * Engine for a file path; default node:sqlite where the runtime has it (Node >= 22.13), else better-sqlite3
   * (an optional peer dependency: `npm install better-sqlite3`).
   */
  driver?: SqliteDriverName;
  /** `synchronous=FULL`: every append survives power loss, at one device flush per commit. Default NORMAL. */
  durability?: "normal" | "full";
  /** Milliseconds a writer waits for another process's lock (default 5000). */
  busyTimeoutMs?: number;
  /**
   * Most MiB of SQLite's page cache for this connection (default 64). It fills only as pages are read, so a small
   * store never reaches it; a large one searches and walks long paths faster with more (docs/PERFORMANCE.md).
   */
  pageCacheMiB?: number;
  /**
   * Bytes one stored value may hold before content is split across rows (default: no limit on a file or handle,
   * 2 MB on a `sql` tag, a Durable Object's limit). Lower it to exercise the split on a local file.
   */
  maxValueBytes?: number;
  /** Bounds on search queries (length, distinct words); see {@link QueryLimits}. */
  queryLimits?: Partial<QueryLimits>;
  /**
   * Encryption at rest: the content of messages of an owner the keyring has a key for is stored sealed with
   * AES-256-GCM, and erasing the owner destroys its key (docs/PRIVACY.md, "Encryption at rest").
   */
  keyring?: Keyring;
  /**
   * Keep a change log so subscribers in other processes see this store's writes and a subscriber can resume from
   * a cursor (docs/FEED.md). Every process writing the file should enable it. Default off.
   */
  changeLog?: boolean | ChangeLogOptions;
}

/** A better-sqlite3 `Database` or a node:sqlite `DatabaseSync` handle, as the user created it. */
export interface SqliteHandle {
  prepare(sql: string): unknown;
  exec(sql: string): unknown;
  close(): unknown;
}

/** What SQLite storage can be opened from: a path, `:memory:`, a database handle, or a `sql`-tag object. */
export type SqliteSource = string | SqliteHandle | SqlTagSource;

/** True when `value` is a database handle agent-session can drive. */
export function isSqliteHandle(value: unknown): value is SqliteHandle {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as SqliteHandle).prepare === "function" &&
    typeof (value as SqliteHandle).exec === "function" &&
    typeof (value as SqliteHandle).close === "function"
  );
}

function handleDriverName(handle: SqliteHandle): string {
  return typeof (handle as { pragma?: unknown }).pragma === "function" ? "better-sqlite3" : "node:sqlite";
}

/** What storage opens from: a non-empty path, a database handle or a `sql`-tag object (`INVALID_ARGUMENT` at `source`). */
const sqliteSource = refusedBy<SqliteSource>(
  (source) =>
    source === ""
      ? "A SQLite path must not be empty"
      : typeof source === "string" || isSqliteHandle(source) || isSqlTagSource(source)
        ? undefined
        : "SQLite storage needs a file path, a better-sqlite3 Database, a node:sqlite DatabaseSync or an object with a sql tag",
  (source) => (source === "" ? "required" : "type"),
);

/** Opens (or wraps) SQLite storage and applies the connection settings. */
export function openSqlite(source: SqliteSource, options: SqliteOptions = {}): SqlDriver {
  // Checked before a file is opened, so a bad option leaves no handle open.
  const settings = parseInput(connectionSettings, options);
  if (isSqlTagSource(source) && !isSqliteHandle(source)) {
    const tagDriver = new SqlTagDriver(source);
    if (settings.maxValueBytes !== undefined) tagDriver.maxValueBytes = settings.maxValueBytes;
    return tagDriver;
  }
  let driver: PreparedDriver;
  let isMemory = false;
  parseInput(sqliteSource, source, { path: "source" });
  if (typeof source === "string") {
    refusePostgresUrl(source);
    isMemory = source === ":memory:";
    driver = openPath(source, options.driver);
  } else {
    driver = new PreparedDriver(handleDriverName(source), source as never, false);
  }
  try {
    configure(driver, settings, isMemory);
  } catch (error) {
    driver.close(); // closes only a handle opened here
    throw error;
  }
  if (settings.maxValueBytes !== undefined) driver.maxValueBytes = settings.maxValueBytes;
  return driver;
}

// A Postgres URL would otherwise be taken for a file name and fail as a missing directory ("postgres:"), which
// does not say that Postgres is one import away.
function refusePostgresUrl(path: string): void {
  if (!/^postgres(ql)?:\/\//i.test(path)) return;
  const shown = path.replace(/:\/\/([^:/@]*):[^@]*@/, "://$1:***@");
  throw new SessionError(
    "INVALID_ARGUMENT",
    `${shown} is a PostgreSQL URL, not a SQLite path: open it with PostgresStore from "agent-session/postgres" ` +
      "(`Session.create(new PostgresStore(url))`, or `await PostgresStore.open(url)` to connect and migrate now)",
    { issues: [{ path: "", rule: "format" }] },
  );
}

// node:sqlite where the runtime has it (nothing to build or install), better-sqlite3 on older Node or when asked.
function openPath(path: string, choice: SqliteDriverName | undefined): PreparedDriver {
  if (choice === "better-sqlite3")
    return openBetterSqlite3(path, `SQLite storage with driver "better-sqlite3"`);
  const nodeSqlite = loadNodeSqlite();
  if (nodeSqlite) {
    return open("node:sqlite", path, () => {
      // node:sqlite loads no extension on a database opened without allowExtension, not even later: with it, the
      // vector index and a purge (draining what an embedder-less process's erasures left in sqlite-vec's table)
      // can load sqlite-vec whenever the file has that table, as on better-sqlite3. Loading is off again before
      // the first statement, so SQL never loads a library; loadSqliteVec turns it on only for its own load.
      const db = new nodeSqlite.DatabaseSync(path, { allowExtension: true }) as {
        enableLoadExtension(allow: boolean): void;
        close(): void;
      };
      try {
        db.enableLoadExtension(false);
      } catch (error) {
        db.close();
        throw error;
      }
      return db;
    });
  }
  if (choice === "node:sqlite") {
    throw new SessionError(
      "UNSUPPORTED",
      `The node:sqlite driver needs Node.js >= 22.13 (this is ${globalThis.process?.version ?? "not Node.js"}); use better-sqlite3 instead`,
    );
  }
  return openBetterSqlite3(
    path,
    `SQLite storage on Node.js ${globalThis.process?.version ?? "not Node.js"} (node:sqlite needs >= 22.13)`,
  );
}

function openBetterSqlite3(path: string, feature: string): PreparedDriver {
  let Database: new (file: string) => unknown;
  try {
    Database = loadBetterSqlite3() as unknown as new (file: string) => unknown;
  } catch (error) {
    if (isLoadFailure(error)) throw new MissingDependencyError("better-sqlite3", feature, error);
    throw new SessionError("STORAGE", `Cannot load better-sqlite3: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return open("better-sqlite3", path, () => new Database(path));
}

function open(name: SqliteDriverName, path: string, create: () => unknown): PreparedDriver {
  try {
    return new PreparedDriver(name, create() as never, true);
  } catch (error) {
    throw new SessionError("STORAGE", `Cannot open SQLite database "${path}": ${(error as Error).message}`, {
      cause: error,
    });
  }
}

function isLoadFailure(error: unknown): boolean {
  const code = (error as { code?: string })?.code;
  const message = error instanceof Error ? error.message : "";
  return (
    code === "MODULE_NOT_FOUND" ||
    code === "ERR_DLOPEN_FAILED" ||
    /NODE_MODULE_VERSION|bindings file/.test(message)
  );
}

/** Largest page cache a connection may ask for (1 TiB): a bound that keeps the pragma's KiB count an integer. */
const MAX_PAGE_CACHE_MIB = 1 << 20;

/** The connection settings of a store's options (`INVALID_ARGUMENT` at the option); the others pass unread. */
const connectionSettings = z.object({
  // Checked here, before a file opens, as Postgres checks it (sql/sealing/postgres.ts): the store reads it later.
  keyring: keyringSchema.optional(),
  busyTimeoutMs: numberWhere(
    "busyTimeoutMs must be a whole number >= 0",
    (ms) => Number.isInteger(ms) && ms >= 0,
  )
    // null is no setting, as an absent one (the option was read with ??).
    .nullish()
    .transform((ms) => ms ?? 5000),
  durability: z.enum(["normal", "full"], rule('durability must be "normal" or "full"')).optional(),
  pageCacheMiB: numberWhere(
    `pageCacheMiB must be a whole number from 1 to ${MAX_PAGE_CACHE_MIB}`,
    (mib) => Number.isInteger(mib) && mib >= 1 && mib <= MAX_PAGE_CACHE_MIB,
  )
    .nullish()
    .transform((mib) => mib ?? 64),
  maxValueBytes: byteCap("maxValueBytes").optional(),
});

type ConnectionSettings = z.output<typeof connectionSettings>;

function configure(driver: PreparedDriver, settings: ConnectionSettings, isMemory: boolean): void {
  const timeout = settings.busyTimeoutMs;
  driver.exec(`PRAGMA busy_timeout = ${timeout}`);
  // Switching a new file to WAL upgrades a read lock to a write lock: while another connection (another process
  // opening the same new file) holds its write lock, SQLite answers busy at once instead of waiting busy_timeout.
  if (!isMemory) retryWhileBusy(() => driver.exec("PRAGMA journal_mode = WAL"), timeout);
  driver.exec(`PRAGMA synchronous = ${settings.durability === "full" ? "FULL" : "NORMAL"}`);
  // A delete overwrites the deleted content with zeros, and freed pages are zeroed too, so deleted text leaves the
  // database once the log is checkpointed (store.purge(), docs/PRIVACY.md). Appends delete nothing; a delete costs
  // a little more CPU and no more pages (docs/PERFORMANCE.md, "Secure delete").
  driver.exec("PRAGMA secure_delete = ON");
  // Up to 64 MiB of page cache by default, filled only as pages are read (a small store never reaches it):
  // parent-pointer walks of long paths are ~2x faster than with the default 2 MiB, and a search across all sessions
  // of a 1M-message store looks up its candidates in a 20 MiB index, which 16 MiB did not hold (p99 6.9-8.8 ms
  // against 5.9-6.1 ms).
  driver.exec(`PRAGMA cache_size = -${settings.pageCacheMiB * 1024}`);
  // An append writes ~5 WAL pages, so the default checkpoint every 1,000 pages landed on one append in ~200 and
  // was the CPU p99 of appends (~2 ms); every 4,000 pages (a WAL of at most ~16 MB) it lands on one in ~800, below
  // the p99, with no more checkpoint work in total (docs/PERFORMANCE.md, "Everyday sizes").
  if (!isMemory) driver.exec("PRAGMA wal_autocheckpoint = 4000");
}
