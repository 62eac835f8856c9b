import { MissingDependencyError, SessionError } from "../../errors.js";

/** Anything with pg's `query(text, values)`: a `pg.Pool`, a `pg.Client`, a PGlite instance. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** Connection options handed to `new pg.Pool(options)` (connectionString, host, user, …). */
export type PgPoolOptions = Record<string, unknown>;

/** What Postgres storage connects through: a client or pool you own, a connection URL, or pool options. */
export type PostgresSource = string | PgQueryable | PgPoolOptions;

type Runner = <T>(text: string, values?: unknown[]) => Promise<T[]>;

interface PoolLike extends PgQueryable {
  connect(): Promise<PgQueryable & { release(error?: unknown): void }>;
  totalCount: number;
  end?(): Promise<void>;
  on?(event: "error", listener: (error: unknown) => void): unknown;
}

interface PGliteLike extends PgQueryable {
  transaction<T>(fn: (tx: PgQueryable) => Promise<T>): Promise<T>;
}

function runner(target: PgQueryable): Runner {
  return async <T>(text: string, values: unknown[] = []) => (await target.query(text, values)).rows as T[];
}

function isQueryable(value: unknown): value is PgQueryable {
  return typeof value === "object" && value !== null && typeof (value as PgQueryable).query === "function";
}

/** One way of running queries and transactions over whichever client the user gave. */
export class PgConnection {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly target: PgQueryable,
    private readonly owned: boolean,
  ) {}

  /** Wraps a user client, or opens a pool (loading `pg` on demand) from a URL or options. */
  static async open(source: PostgresSource): Promise<PgConnection> {
    if (isQueryable(source)) return new PgConnection(source, false);
    if (typeof source !== "string" && (typeof source !== "object" || source === null)) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "Postgres storage needs a pg Pool/Client, a connection URL or options",
      );
    }
    let pg: { Pool: new (options: PgPoolOptions) => PoolLike };
    try {
      const loaded = (await import("pg")) as unknown as { default?: typeof pg } & typeof pg;
      pg = loaded.default ?? loaded;
    } catch (error) {
      throw new MissingDependencyError("pg", "PostgresSessionStorage", error);
    }
    const options = typeof source === "string" ? { connectionString: source } : source;
    const pool = new pg.Pool(options);
    // An idle connection that dies (server restart) emits "error" on the pool, which would crash the process
    // without a listener; the next query reports the problem instead.
    pool.on?.("error", () => undefined);
    return new PgConnection(pool, true);
  }

  private get kind(): "pool" | "pglite" | "client" {
    const target = this.target as Partial<PoolLike & PGliteLike>;
    if (typeof target.connect === "function" && typeof target.totalCount === "number") return "pool";
    if (typeof target.transaction === "function") return "pglite";
    return "client";
  }

  // A single pg.Client runs one query at a time and has one transaction: our statements take turns on it so
  // one call's BEGIN…COMMIT never swallows another call's statement.
  private serial<T>(body: () => Promise<T>): Promise<T> {
    const result = this.queue.then(body, body);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Runs one statement and returns its rows. */
  query<T>(text: string, values: unknown[] = []): Promise<T[]> {
    if (this.kind === "client") return this.serial(() => runner(this.target)<T>(text, values));
    return runner(this.target)<T>(text, values);
  }

  /** Runs `body` in one transaction on one connection, rolled back when it throws. */
  async transaction<T>(body: (run: Runner) => Promise<T>): Promise<T> {
    const kind = this.kind;
    if (kind === "pglite") return (this.target as PGliteLike).transaction((tx) => body(runner(tx)));
    if (kind === "client") return this.serial(() => inTransaction(this.target, body));
    const client = await (this.target as PoolLike).connect();
    let failure: unknown;
    try {
      return await inTransaction(client, body);
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      client.release(failure);
    }
  }

  /** Ends the pool when this connection opened it; a client passed in stays open. */
  async close(): Promise<void> {
    if (this.owned) await (this.target as PoolLike).end?.();
  }
}

async function inTransaction<T>(target: PgQueryable, body: (run: Runner) => Promise<T>): Promise<T> {
  await target.query("BEGIN");
  try {
    const result = await body(runner(target));
    await target.query("COMMIT");
    return result;
  } catch (error) {
    try {
      await target.query("ROLLBACK");
    } catch {
      // The connection may be broken; the original error is the one worth reporting.
    }
    throw error;
  }
}
