import { SessionError, StorageError } from "../../../errors.js";
import type { ContentKeys } from "../../../store/crypto/content-keys.js";
import { isBusy } from "./busy.js";
import { withoutRebindReprepare } from "./rebind.js";

/** A value SQLite can bind. */
export type SqlValue = string | number | bigint | null | Uint8Array;

/** A result row. */
export type SqlRow = Record<string, unknown>;

/**
 * The few operations agent-session needs from a SQLite connection, so better-sqlite3, `node:sqlite` and a Durable
 * Object's `sql` tag all work behind one type. Every statement uses positional `?` parameters.
 */
export interface SqlDriver {
  /** Which engine runs the statements: "better-sqlite3", "node:sqlite" or "sql-tag". */
  readonly name: string;
  /** False when the engine manages durability itself and refuses PRAGMA and BEGIN (a Durable Object). */
  readonly configurable: boolean;
  /**
   * Largest string or blob one value may hold (bytes). A Durable Object caps a value at 2 MB, so content larger
   * than that is split across rows; a local SQLite file has no practical limit (Infinity).
   */
  readonly maxValueBytes: number;
  /** The engine connection behind this driver, where there is one: caches of a connection's state key on it. */
  readonly handle?: object;
  /** The store's keys when it was opened with a keyring: content of owners with a key is sealed (store/crypto). */
  readonly keys?: ContentKeys;
  all<T = SqlRow>(sql: string, params?: readonly SqlValue[]): T[];
  /** The first column of every row, without building row objects (long history reads return one per message). */
  column<T>(sql: string, params?: readonly SqlValue[]): T[];
  /**
   * Every row as an array of its column values in select order, without building row objects: an object costs a
   * property per column (a search's page of hits: a third of its statement's time). Columns need names that are
   * not integers, since a driver that only returns objects lists those first.
   */
  tuples<T extends readonly unknown[]>(sql: string, params?: readonly SqlValue[]): T[];
  get<T = SqlRow>(sql: string, params?: readonly SqlValue[]): T | undefined;
  run(sql: string, params?: readonly SqlValue[]): void;
  /** {@link run}, answering how many rows it inserted, updated or deleted (not on a `sql` tag: it does not tell). */
  runChanges?(sql: string, params?: readonly SqlValue[]): number;
  /** Runs `fn` atomically; nested calls join the outer transaction. Writers take the lock up front. */
  transaction<T>(fn: () => T): T;
  /**
   * Runs `fn`, which only reads, on one snapshot: its statements see the same commit. Inside a transaction it joins
   * it; `fn` may not start one.
   */
  read<T>(fn: () => T): T;
  close(): void;
}

interface Statement {
  all(...params: SqlValue[]): unknown[];
  get(...params: SqlValue[]): unknown;
  run(...params: SqlValue[]): { changes?: number | bigint } | undefined;
  /** better-sqlite3: return the first column's value instead of a row. */
  pluck?(enabled: boolean): unknown;
  /** better-sqlite3: return rows as arrays. */
  raw?(enabled: boolean): unknown;
  /** node:sqlite (Node >= 22.16): return rows as arrays. */
  setReturnArrays?(enabled: boolean): unknown;
  /** better-sqlite3: return integers as BigInt. */
  safeIntegers?(enabled: boolean): unknown;
  /** node:sqlite: return integers as BigInt. */
  setReadBigInts?(enabled: boolean): unknown;
}

interface PreparingDatabase {
  prepare(sql: string): Statement;
  exec(sql: string): unknown;
  close(): unknown;
  /** better-sqlite3: a transaction is open on the handle (its owner's, when the handle is shared). */
  readonly inTransaction?: boolean;
  /** node:sqlite (22.16+): the same. */
  readonly isTransaction?: boolean;
}

/** A statement prepared for `column` or `tuples`, and how its rows come back. */
interface ShapedStatement {
  statement: Statement;
  mode: "pluck" | "arrays" | "objects";
}

const BUSY_RETRIES = 5;

/** Rethrows an engine error as a StorageError naming the statement (a SessionError passes through). */
export function wrapSqlError(error: unknown, sql: string): never {
  if (error instanceof SessionError) throw error;
  const text = error instanceof Error ? error.message : String(error);
  throw new StorageError(`SQLite failed: ${text} (in: ${sql.replace(/\s+/g, " ").slice(0, 120)})`, error);
}

/** A driver over any handle with `prepare`/`exec` (better-sqlite3's Database, node:sqlite's DatabaseSync). */
export class PreparedDriver implements SqlDriver {
  readonly configurable = true;
  maxValueBytes = Number.POSITIVE_INFINITY;
  private readonly statements = new Map<string, Statement>();
  // Statements of their own, since plucking or raw rows change how a prepared statement returns every row.
  private readonly columnStatements = new Map<string, ShapedStatement>();
  private readonly tupleStatements = new Map<string, ShapedStatement>();
  private depth = 0;
  private reading = false;

  constructor(
    readonly name: string,
    private readonly db: PreparingDatabase,
    private readonly closeHandle: boolean,
  ) {}

  get handle(): object {
    return this.db;
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  // A handle its owner opened for 64-bit integers (better-sqlite3's defaultSafeIntegers, node:sqlite's
  // readBigInts) returns BigInts, which the arithmetic on seqs and counts cannot mix with numbers; every integer
  // stored here fits a double, so each statement reads plain numbers whatever the handle's default.
  private prepare(sql: string): Statement {
    const statement = this.db.prepare(withoutRebindReprepare(sql));
    statement.safeIntegers?.(false);
    statement.setReadBigInts?.(false);
    return statement;
  }

  all<T>(sql: string, params: readonly SqlValue[] = []): T[] {
    try {
      return this.statement(sql).all(...params) as T[];
    } catch (error) {
      return wrapSqlError(error, sql);
    }
  }

  column<T>(sql: string, params: readonly SqlValue[] = []): T[] {
    try {
      const entry = this.shaped(this.columnStatements, sql, "pluck");
      const rows = entry.statement.all(...params);
      if (entry.mode === "pluck") return rows as T[];
      if (entry.mode === "arrays") return rows.map((row) => (row as T[])[0] as T);
      return rows.map((row) => Object.values(row as SqlRow)[0] as T);
    } catch (error) {
      return wrapSqlError(error, sql);
    }
  }

  tuples<T extends readonly unknown[]>(sql: string, params: readonly SqlValue[] = []): T[] {
    try {
      const entry = this.shaped(this.tupleStatements, sql, "arrays");
      const rows = entry.statement.all(...params);
      return entry.mode === "arrays"
        ? (rows as T[])
        : rows.map((row) => Object.values(row as SqlRow) as unknown as T);
    } catch (error) {
      return wrapSqlError(error, sql);
    }
  }

  // The statement for `sql` returning its rows as `want` (the first column, or arrays), prepared on first use; an
  // engine that can do neither returns objects, converted by the caller.
  private shaped(
    cache: Map<string, ShapedStatement>,
    sql: string,
    want: "pluck" | "arrays",
  ): ShapedStatement {
    let entry = cache.get(sql);
    if (entry) return entry;
    const statement = this.prepare(sql);
    if (want === "pluck" && typeof statement.pluck === "function") {
      statement.pluck(true);
      entry = { statement, mode: "pluck" };
    } else if (want === "arrays" && typeof statement.raw === "function") {
      statement.raw(true);
      entry = { statement, mode: "arrays" };
    } else if (typeof statement.setReturnArrays === "function") {
      statement.setReturnArrays(true);
      entry = { statement, mode: "arrays" };
    } else {
      entry = { statement, mode: "objects" };
    }
    cache.set(sql, entry);
    return entry;
  }

  get<T>(sql: string, params: readonly SqlValue[] = []): T | undefined {
    try {
      return (this.statement(sql).get(...params) ?? undefined) as T | undefined;
    } catch (error) {
      return wrapSqlError(error, sql);
    }
  }

  run(sql: string, params: readonly SqlValue[] = []): void {
    this.runChanges(sql, params);
  }

  runChanges(sql: string, params: readonly SqlValue[] = []): number {
    try {
      return Number(this.statement(sql).run(...params)?.changes ?? 0);
    } catch (error) {
      return wrapSqlError(error, sql);
    }
  }

  /** Runs DDL or pragmas (several statements allowed). */
  exec(sql: string): void {
    try {
      this.db.exec(sql);
    } catch (error) {
      wrapSqlError(error, sql);
    }
  }

  transaction<T>(fn: () => T): T {
    // A deferred read transaction that turns into a write fails on a stale snapshot instead of waiting its turn.
    if (this.reading) throw new SessionError("UNSUPPORTED", "A write cannot start inside a read snapshot");
    if (this.depth > 0) return fn();
    this.begin();
    this.depth++;
    try {
      const result = fn();
      this.run("COMMIT");
      return result;
    } catch (error) {
      try {
        this.db.exec("ROLLBACK");
      } catch {
        // The failed statement may already have rolled the transaction back; the original error is what matters.
      }
      throw error;
    } finally {
      this.depth--;
    }
  }

  /**
   * One read transaction (a deferred BEGIN) around `fn`: outside one, every statement opens and closes its own,
   * and in WAL mode that is two lock calls on the shared-memory file each time (~6 µs per statement here, against
   * ~8 µs for the pair of BEGIN and COMMIT): a search of eight statements spent 45 µs on them.
   */
  read<T>(fn: () => T): T {
    // Inside a transaction, ours or the owner's of a shared handle, the statements already share its snapshot.
    if (this.depth > 0 || this.db.inTransaction === true || this.db.isTransaction === true) return fn();
    try {
      this.statement("BEGIN").run();
    } catch (error) {
      wrapSqlError(error, "BEGIN");
    }
    this.depth++;
    this.reading = true;
    let result: T;
    try {
      result = fn();
    } catch (error) {
      this.endRead("ROLLBACK");
      throw error;
    }
    this.endRead("COMMIT");
    return result;
  }

  private endRead(end: "COMMIT" | "ROLLBACK"): void {
    this.depth--;
    this.reading = false;
    try {
      this.statement(end).run();
    } catch (error) {
      // A statement that failed may have ended the transaction already; nothing was written either way.
      if (end === "COMMIT") throw wrapSqlError(error, end);
    }
  }

  // busy_timeout already waits for the lock; the retries only cover the rare busy answer it cannot absorb.
  private begin(): void {
    for (let attempt = 0; ; attempt++) {
      try {
        // Prepared once and reused like every other statement: BEGIN and COMMIT run on every write.
        this.statement("BEGIN IMMEDIATE").run();
        return;
      } catch (error) {
        if (!isBusy(error) || attempt >= BUSY_RETRIES) wrapSqlError(error, "BEGIN IMMEDIATE");
      }
    }
  }

  close(): void {
    this.statements.clear();
    this.columnStatements.clear();
    this.tupleStatements.clear();
    if (this.closeHandle) this.db.close();
  }
}
