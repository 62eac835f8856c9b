import { createHash } from "node:crypto";
import { z } from "zod";
import { SessionError, StorageError } from "../../../errors.js";
import { importOptional } from "../../../runtime/load.js";
import { parseInput } from "../../../schema/parse.js";
import { says } from "../../../schema/to-session-error.js";
import { emittedNotices, type NoticesOf, pgliteNotices } from "./notices.js";
import {
  isPostgresConnection,
  type PostgresConnection,
  type PostgresQueryable,
  queryableFromConnection,
} from "./reference-connection.js";

export type { NoticesOf } from "./notices.js";
export type { PostgresQueryable } from "./reference-connection.js";

/**
 * Where Postgres storage comes from: a connection string (a Pool is created and owned), a `query()` connection,
 * or the reference's `execute()` connection ({@link PostgresConnection}).
 */
export type PostgresSource = string | PostgresQueryable | PostgresConnection;

/**
 * Runs one statement and returns its rows. `prepared` asks for a named prepared statement where the connection
 * is a real pg one (only for statements whose plan does not depend on the parameter values).
 */
export type Query = <T>(sql: string, params?: readonly unknown[], prepared?: boolean) => Promise<T[]>;

/** A connection with the two operations the store needs; transactions always run on one physical connection. */
export interface Executor {
  /** "pool" (many connections), "client" (one pg connection) or "pglite" (in-process, one connection). */
  readonly kind: "pool" | "client" | "pglite";
  query: Query;
  /** Runs `fn` in a READ COMMITTED transaction; rolls back when it throws. */
  transaction<T>(fn: (query: Query) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` on one connection outside a transaction, so session settings (`SET lock_timeout`) reach statements
   * that cannot run in one (`VACUUM`, `REINDEX … CONCURRENTLY`); `fn` resets what it sets. Every executor
   * `openExecutor` makes has it; one that joins a transaction does not. `noticesOf` runs a statement there and
   * resolves the notices it raised, where the connection delivers them (pg, PGlite; not an `execute()` one).
   */
  pinned?<T>(fn: (query: Query, noticesOf?: NoticesOf) => Promise<T>): Promise<T>;
  /** Ends the pool when the store created it; a connection passed in by the user stays open. */
  close(): Promise<void>;
  /**
   * LISTENs on `channel` on a connection of its own (pools only) and calls `onNotify` per notification; resolves
   * the function that stops listening and gives the connection back.
   */
  listen?(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
}

interface PoolClientLike extends PostgresQueryable {
  release(error?: Error | boolean): void;
}

interface PoolLike extends PostgresQueryable {
  connect(): Promise<PoolClientLike>;
  end(): Promise<void>;
  totalCount: number;
}

interface PGliteLike extends PostgresQueryable {
  transaction<T>(fn: (tx: PostgresQueryable) => Promise<T>): Promise<T>;
  exec(sql: string): Promise<unknown>;
}

/** True when `value` can run queries (a pg Pool/Client, a PGlite instance or a look-alike). */
export function isPostgresQueryable(value: unknown): value is PostgresQueryable {
  return (
    typeof value === "object" && value !== null && typeof (value as PostgresQueryable).query === "function"
  );
}

function isPool(value: PostgresQueryable): value is PoolLike {
  const pool = value as Partial<PoolLike>;
  return (
    typeof pool.connect === "function" &&
    typeof pool.end === "function" &&
    typeof pool.totalCount === "number"
  );
}

// pg's Pool (it carries its Client class) hands out pg Clients, which accept named statements.
function isPgPool(value: PoolLike): boolean {
  return typeof (value as { Client?: unknown }).Client === "function";
}

function isPGlite(value: PostgresQueryable): value is PGliteLike {
  const db = value as Partial<PGliteLike>;
  return typeof db.transaction === "function" && typeof db.exec === "function";
}

/** The SQLSTATE of a driver error (pg and PGlite both expose `code`), or undefined. */
export function sqlState(error: unknown): string | undefined {
  for (let e: unknown = error; e && typeof e === "object"; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

function wrap(error: unknown, sql: string): never {
  if (error instanceof SessionError) throw error;
  const text = (error instanceof Error ? error.message : String(error)).slice(0, 300);
  throw new StorageError(`Postgres failed: ${text} (in: ${sql.replace(/\s+/g, " ").slice(0, 120)})`, error);
}

const names = new Map<string, string>();

// Named by a hash of the text: two stores with different tables on one connection never share a name.
function statementName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    name = `agent_session_${createHash("sha1").update(sql).digest("hex").slice(0, 20)}`;
    names.set(sql, name);
  }
  return name;
}

interface NamedQueryable {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

function runner(connection: PostgresQueryable, canPrepare: boolean): Query {
  return async <T>(sql: string, params: readonly unknown[] = [], prepared = false) => {
    try {
      const values = params as unknown[];
      const result =
        prepared && canPrepare
          ? await (connection as unknown as NamedQueryable).query({
              name: statementName(sql),
              text: sql,
              values,
            })
          : await connection.query(sql, values);
      return result.rows as T[];
    } catch (error) {
      return wrap(error, sql);
    }
  };
}

// pg's Client (and the PoolClient a Pool hands out) accepts a query config with a statement name.
function isPgClient(value: PostgresQueryable): boolean {
  return typeof (value as { connectionParameters?: unknown }).connectionParameters === "object";
}

async function inTransaction<T>(
  query: Query,
  fn: (query: Query) => Promise<T>,
  onBroken: () => void = () => undefined,
): Promise<T> {
  await query("BEGIN ISOLATION LEVEL READ COMMITTED");
  try {
    const result = await fn(query);
    await query("COMMIT");
    return result;
  } catch (error) {
    // The original error is what matters; a failed ROLLBACK means the connection's state is unknown.
    await query("ROLLBACK").catch(onBroken);
    throw error;
  }
}

function poolExecutor(pool: PoolLike, owned: boolean, prepare: boolean): Executor {
  return {
    kind: "pool",
    query: runner(pool, prepare),
    async transaction(fn) {
      let client: PoolClientLike;
      try {
        client = await pool.connect();
      } catch (error) {
        return wrap(error, "connect");
      }
      // A connection whose ROLLBACK failed is destroyed rather than returned to the pool mid-transaction.
      let broken = false;
      try {
        return await inTransaction(runner(client, prepare), fn, () => {
          broken = true;
        });
      } finally {
        client.release(broken);
      }
    },
    async pinned(fn) {
      let client: PoolClientLike;
      try {
        client = await pool.connect();
      } catch (error) {
        return wrap(error, "connect");
      }
      // A failure may leave a session setting behind: that connection is not handed out again.
      let failed = false;
      try {
        return await fn(
          runner(client, prepare),
          emittedNotices(client, (c) => runner(c, false)),
        );
      } catch (error) {
        failed = true;
        throw error;
      } finally {
        client.release(failed);
      }
    },
    close: async () => {
      if (owned) await pool.end();
    },
    async listen(channel, onNotify) {
      const client = (await pool.connect()) as PoolClientLike & Partial<NotifyingClient>;
      if (typeof client.on !== "function") {
        client.release();
        throw new StorageError("This Postgres pool's clients cannot LISTEN");
      }
      let broken = false;
      client.on("notification", (message) => {
        if (message.channel === channel) onNotify();
      });
      // A dropped listening connection must not crash the process; the watcher's periodic read still runs.
      client.on("error", () => {
        broken = true;
      });
      await client.query(`LISTEN "${channel}"`);
      return async () => {
        if (!broken) await client.query(`UNLISTEN "${channel}"`).catch(() => (broken = true));
        client.release(broken);
      };
    },
  };
}

interface NotifyingClient {
  on(event: "notification", listener: (message: { channel: string }) => void): void;
  on(event: "error", listener: (error: Error) => void): void;
}

/**
 * One pg connection runs one statement at a time, and a transaction must not interleave with other work of this
 * store on it, so every operation queues behind the previous one (a Client would queue them anyway). Statements
 * the application itself sends on the same Client meanwhile could still land inside a store transaction: give
 * the store a Pool when the connection is shared.
 */
function clientExecutor(client: PostgresQueryable, prepare: boolean): Executor {
  let tail: Promise<unknown> = Promise.resolve();
  const raw = runner(client, prepare && isPgClient(client));
  const serial = <T>(op: () => Promise<T>): Promise<T> => {
    const result = tail.then(op, op);
    tail = result.catch(() => undefined);
    return result;
  };
  return {
    kind: "client",
    query: (sql, params, prepared) => serial(() => raw(sql, params, prepared)),
    transaction: (fn) => serial(() => inTransaction(raw, fn)),
    pinned: (fn) =>
      serial(() =>
        fn(
          raw,
          emittedNotices(client, (c) => runner(c, false)),
        ),
      ),
    close: async () => undefined,
  };
}

function pgliteExecutor(db: PGliteLike): Executor {
  return {
    kind: "pglite",
    query: runner(db, false),
    // PGlite's own transaction() holds its connection mutex, so other queries wait instead of interleaving.
    transaction: (fn) =>
      db.transaction(async (tx) => {
        const query = runner(tx, false);
        await query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
        return fn(query);
      }),
    // One connection: nothing else of this store's runs between fn's statements unless fn awaits other work.
    pinned: (fn) =>
      fn(
        runner(db, false),
        pgliteNotices(db, (c) => runner(c, false)),
      ),
    close: async () => undefined,
  };
}

/**
 * A pg Pool for a connection string and/or pg pool settings, for callers that manage the pool themselves (the
 * CLI, `PostgresSessionStorage` given pool options).
 */
export async function createPgPool(
  url: string | undefined,
  settings: object = {},
): Promise<PoolLike & { end(): Promise<void> }> {
  return (await poolFromUrl(url, settings)) as PoolLike & { end(): Promise<void> };
}

async function poolFromUrl(url: string | undefined, settings: object = {}): Promise<PoolLike> {
  const module = await importOptional<{ default?: { Pool?: unknown }; Pool?: unknown }>(
    "pg",
    "Postgres storage from a connection string",
    () => import("pg"),
  );
  const Pool = (module.default?.Pool ?? module.Pool) as new (
    config: object,
  ) => PoolLike & {
    on(event: "error", listener: (error: Error) => void): void;
  };
  // allowExitOnIdle: a pool the library created must not keep the process alive once work is done.
  const pool = new Pool({
    ...(url === undefined ? {} : { connectionString: url }),
    allowExitOnIdle: true,
    ...settings,
  });
  // An idle connection dropped by the server emits "error" on the pool; unhandled, it would crash the process.
  // The next query on that pool reports the failure instead.
  pool.on("error", () => undefined);
  return pool;
}

/**
 * Wraps a user connection (or opens a Pool for a connection string) in an {@link Executor}; `prepare` allows
 * named prepared statements on pg connections.
 */
export async function openExecutor(source: PostgresSource, prepare = true): Promise<Executor> {
  if (typeof source === "string") {
    const pool = await poolFromUrl(source);
    return poolExecutor(pool, true, prepare && isPgPool(pool));
  }
  // The reference's shape is one connection as far as we can tell: transactions go through it in order.
  if (!isPostgresQueryable(source)) return clientExecutor(queryableFromConnection(source), false);
  if (isPool(source)) return poolExecutor(source, false, prepare && isPgPool(source));
  if (isPGlite(source)) return pgliteExecutor(source);
  return clientExecutor(source, prepare);
}

const postgresSource = z.custom<PostgresSource>(
  (source) =>
    (typeof source === "string" && source.length > 0) ||
    isPostgresQueryable(source) ||
    isPostgresConnection(source),
  says(
    "Postgres storage needs a connection string, a pg Pool or Client, a PGlite instance, or an object with query() or execute()",
    "type",
  ),
);

/** `source` if it is a non-empty connection string or an object with `query()` or `execute()`, else `INVALID_ARGUMENT`. */
export function parsePostgresSource(source: unknown): PostgresSource {
  return parseInput(postgresSource, source, { path: "source" });
}
