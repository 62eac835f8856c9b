import { statSync } from "node:fs";
import type { SessionStore } from "../contract/store.js";
import { SessionError } from "../errors.js";
import type { VectorStoreOptions } from "../search/vectors/types.js";
import { probeSqliteFile, type SqliteFileKind } from "../sqlite/maintenance.js";
import { SqliteStore } from "../sqlite/store.js";
import type { Keyring } from "../store/crypto/keyring.js";
import { CliError } from "./errors.js";

/**
 * `read`: the database must exist already; `write`: it is created when missing (demo, import); `watch`: as read,
 * with the change log on, so the viewer hears other processes' writes (docs/FEED.md).
 */
export type OpenMode = "read" | "write" | "watch";

/** An open store and how to describe and close it. */
export interface OpenedStore {
  store: SessionStore;
  kind: "sqlite" | "postgres";
  /** The path, or the URL with its password masked (safe to print). */
  location: string;
  close(): Promise<void>;
}

/** Where the tables live in a Postgres database (`--schema`, `--table-prefix`); SQLite has neither. */
export interface TableLocation {
  schema?: string;
  tablePrefix?: string;
}

/** The database the CLI uses when `--db` is not given. */
export const DEFAULT_DB = "./agent-session.db";

/** True for a `postgres://` or `postgresql://` URL. */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/** The URL with its password replaced by `***`, for messages. */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return url.replace(/:\/\/([^:/@]*):[^@]*@/, "://$1:***@");
  }
}

/** Opens the store `--db` names: a SQLite file (checked first, so nothing is created or migrated by mistake) or Postgres. */
export async function openStore(
  db: string,
  mode: OpenMode,
  tables: TableLocation = {},
  vectors: VectorStoreOptions = {},
  keyring?: Keyring,
): Promise<OpenedStore> {
  if (isPostgresUrl(db)) return openPostgres(db, mode, tables, vectors, keyring);
  const given =
    tables.schema !== undefined ? "--schema" : tables.tablePrefix !== undefined ? "--table-prefix" : "";
  if (given)
    throw new CliError(`${given} applies to Postgres only (${db} is a SQLite file)`, "INVALID_ARGUMENT");
  return openSqlite(db, mode, vectors, keyring);
}

/**
 * What a SQLite path holds, checked without writing anything: a missing path is NOT_FOUND unless `mode` creates
 * it; a directory, a device, a FIFO or a socket is refused (SQLite cannot use one, and a 0-byte device would
 * otherwise pass for an empty database); a file that is not SQLite is refused.
 */
export function probeSqlitePath(path: string, mode: OpenMode): SqliteFileKind {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat?.isDirectory()) {
    throw new CliError(`${path} is a directory, not a database file`, "INVALID_ARGUMENT");
  }
  if (stat && !stat.isFile()) {
    throw new CliError(`${path} is not a regular file, so it cannot be a database`, "INVALID_ARGUMENT");
  }
  const kind = probeSqliteFile(path);
  if (kind === "missing" && mode !== "write") {
    throw new CliError(
      `no database at ${path} (pass --db <file|postgres://…>, or create one with 'agent-session demo' or 'agent-session import')`,
      "NOT_FOUND",
    );
  }
  if (kind === "not-sqlite") throw new CliError(`${path} is not a SQLite database`, "INVALID_ARGUMENT");
  return kind;
}

function openSqlite(
  path: string,
  mode: OpenMode,
  vectors: VectorStoreOptions,
  keyring: Keyring | undefined,
): OpenedStore {
  const kind = probeSqlitePath(path, mode);
  // Reading must not add agent-session tables to somebody else's database, nor turn an empty file into a store
  // (SQLite reads a 0-byte file as an empty database); importing into it, or the demo, may.
  if ((kind === "other-sqlite" || kind === "empty") && mode !== "write") {
    const what = kind === "empty" ? "an empty file" : "a SQLite database";
    throw new CliError(`${path} is ${what} without agent-session tables`, "INVALID_ARGUMENT");
  }
  const options = { ...vectors, ...(keyring ? { keyring } : {}) };
  const store = new SqliteStore(path, mode === "watch" ? { changeLog: true, ...options } : options);
  return { store, kind: "sqlite", location: path, close: () => store.close() };
}

type PgPool = Awaited<ReturnType<typeof import("../sql/engines/postgres/client.js").createPgPool>>;

async function pgPool(url: string): Promise<PgPool> {
  try {
    const { createPgPool } = await import("../sql/engines/postgres/client.js");
    // A bounded connect timeout: an unreachable host fails in seconds instead of hanging the command.
    return await createPgPool(url, { connectionTimeoutMillis: 10_000, max: 4 });
  } catch (error) {
    throw new CliError(
      `Postgres needs the "pg" package (npm install pg): ${(error as Error).message}`,
      "MISSING",
    );
  }
}

/** A Postgres failure as the CLI reports it (the first line of the server's message). */
function postgresFailure(location: string, error: unknown): CliError {
  const reason = error instanceof Error ? error.message : String(error);
  return new CliError(`cannot open Postgres at ${location}: ${reason.split("\n")[0]}`, "STORAGE");
}

/** Runs `read` on a short-lived pool for `url`: no store is opened, so no agent-session table is created. */
export async function readPostgres<T>(url: string, read: (db: PgPool) => Promise<T>): Promise<T> {
  const pool = await pgPool(url);
  let result: T;
  try {
    result = await read(pool);
  } catch (error) {
    // The read's failure is the one to report (as openPostgres does); closing the pool is best effort then.
    await pool.end().catch(() => undefined);
    throw postgresFailure(maskUrl(url), error);
  }
  await pool.end();
  return result;
}

async function openPostgres(
  url: string,
  mode: OpenMode,
  tables: TableLocation,
  vectors: VectorStoreOptions,
  keyring: Keyring | undefined,
): Promise<OpenedStore> {
  const location = maskUrl(url);
  const keys = keyring ? { keyring } : {};
  const pool = await pgPool(url);
  try {
    const { PostgresStore } = await import("../postgres/index.js");
    // Reading must not create tables in an empty database or somebody else's schema; importing into it may.
    const store =
      mode === "write"
        ? await PostgresStore.open(pool as never, { ...tables, ...vectors, ...keys })
        : await PostgresStore.openExisting(pool as never, {
            ...tables,
            ...vectors,
            ...keys,
            changeLog: mode === "watch",
          });
    return {
      store,
      kind: "postgres",
      location,
      close: async () => {
        await store.close();
        await pool.end();
      },
    };
  } catch (error) {
    await pool.end().catch(() => undefined);
    if (error instanceof SessionError && (error.code === "NOT_FOUND" || error.code === "INVALID_ARGUMENT")) {
      throw new CliError(`${location}: ${error.message}`, error.code);
    }
    throw postgresFailure(location, error);
  }
}
