/**
 * The driver over a Durable-Object-style `sql` tagged template (a Durable Object, an Agent, or anything shaped like
 * one): the same SqlDriver operations as better-sqlite3 and node:sqlite, within what such storage allows.
 */
import { StorageError } from "../../../errors.js";
import { type SqlDriver, type SqlRow, type SqlValue, wrapSqlError } from "./driver.js";

/** Bytes one value may hold in a Durable Object's SQLite storage (2 MB). */
export const DURABLE_OBJECT_VALUE_LIMIT = 2_000_000;

/** An object with a Durable-Object-style `sql` tagged-template method returning rows. */
export interface SqlTagSource {
  sql(strings: TemplateStringsArray, ...values: unknown[]): unknown;
}

/** True when `value` has a `sql` tagged-template method (a Durable Object / Agent). */
export function isSqlTagSource(value: unknown): value is SqlTagSource {
  return typeof value === "object" && value !== null && typeof (value as SqlTagSource).sql === "function";
}

/**
 * The rows with every BigInt value as a number: a tag over an engine that reads 64-bit integers as BigInt (such as
 * better-sqlite3 with safeIntegers) would break the arithmetic on seqs and counts, and every integer stored here
 * fits a double. Rows without one (a Durable Object's, always) are returned as they are.
 */
function withNumbers(rows: unknown[]): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as Record<string, unknown> | null;
    if (row === null || typeof row !== "object") continue;
    let copy: Record<string, unknown> | undefined;
    for (const key in row) {
      const value = row[key];
      if (typeof value !== "bigint") continue;
      copy ??= { ...row };
      copy[key] = Number(value);
    }
    if (copy) {
      out ??= [...rows];
      out[i] = copy;
    }
  }
  return out ?? rows;
}

interface TransactionalStorage {
  transactionSync?<T>(fn: () => T): T;
}

/**
 * A driver over a `sql` tag. A Durable Object refuses BEGIN and PRAGMA, so transactions go through
 * `ctx.storage.transactionSync` when the object has it; otherwise the tag's own atomicity rules apply
 * (a Durable Object commits all writes of one synchronous turn together).
 */
export class SqlTagDriver implements SqlDriver {
  readonly name = "sql-tag";
  readonly configurable = false;
  /** A Durable Object's documented limit for one string or blob value. */
  maxValueBytes = DURABLE_OBJECT_VALUE_LIMIT;
  private readonly templates = new Map<string, TemplateStringsArray>();
  private depth = 0;

  constructor(private readonly source: SqlTagSource) {}

  private template(sql: string): TemplateStringsArray {
    let template = this.templates.get(sql);
    if (!template) {
      const pieces = sql.split("?");
      template = Object.assign([...pieces], { raw: [...pieces] }) as unknown as TemplateStringsArray;
      Object.freeze(template);
      this.templates.set(sql, template);
    }
    return template;
  }

  all<T>(sql: string, params: readonly SqlValue[] = []): T[] {
    let rows: unknown;
    try {
      rows = this.source.sql(this.template(sql), ...params);
    } catch (error) {
      return wrapSqlError(error, sql);
    }
    if (rows === undefined || rows === null) return [];
    if (Array.isArray(rows)) return withNumbers(rows) as T[];
    if (typeof (rows as Iterable<T>)[Symbol.iterator] === "function") {
      return withNumbers([...(rows as Iterable<unknown>)]) as T[];
    }
    const what = typeof (rows as Promise<unknown>).then === "function" ? "a Promise" : typeof rows;
    throw new StorageError(`The sql tag returned ${what}, expected an array of rows (synchronously)`);
  }

  column<T>(sql: string, params: readonly SqlValue[] = []): T[] {
    return this.all<SqlRow>(sql, params).map((row) => Object.values(row)[0] as T);
  }

  tuples<T extends readonly unknown[]>(sql: string, params: readonly SqlValue[] = []): T[] {
    return this.all<SqlRow>(sql, params).map((row) => Object.values(row) as unknown as T);
  }

  get<T>(sql: string, params: readonly SqlValue[] = []): T | undefined {
    return this.all<T>(sql, params)[0];
  }

  run(sql: string, params: readonly SqlValue[] = []): void {
    this.all(sql, params);
  }

  transaction<T>(fn: () => T): T {
    const storage = (this.source as { ctx?: { storage?: TransactionalStorage } }).ctx?.storage;
    if (this.depth > 0 || typeof storage?.transactionSync !== "function") return fn();
    this.depth++;
    try {
      return storage.transactionSync(fn);
    } finally {
      this.depth--;
    }
  }

  /**
   * Just `fn`: a `sql` tag has no BEGIN (a Durable Object refuses it), and a Durable Object runs one synchronous
   * turn at a time, so nothing commits between `fn`'s statements there.
   */
  read<T>(fn: () => T): T {
    return fn();
  }

  close(): void {}
}
