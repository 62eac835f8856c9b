/**
 * A storage primitive written once for both SQL engines: a program that yields statements and receives their rows.
 * The steps (what to read, what to decide from it, what to write) live in the program; the statement text lives in a
 * small table per engine beside the steps (`src/sql/<concern>/sqlite.ts`, `postgres.ts`), which also decides how a step is
 * packed (Postgres often does in one statement with CTEs what SQLite does in two). SQLite drives a program
 * synchronously inside its transaction (sql/engines/sqlite/program.ts), Postgres asynchronously inside its own
 * (sql/engines/postgres/program.ts), so a fix to the steps is written, reviewed and tested once. The engines differ
 * on purpose where the plan differs (append, history reads, search candidates, FTS, connections): those keep a file
 * per engine behind one interface.
 */

/** A row as an engine answers it: column name → value (integers may come back as strings from Postgres). */
export type Row = Record<string, unknown>;

/** One statement of an engine's table: its text in the engine's dialect, its parameters, and whether it has rows. */
export interface Statement {
  readonly sql: string;
  readonly params: readonly unknown[];
  /** False for a statement that answers no rows (SQLite runs it with `run`): the program receives `[]`. */
  readonly rows: boolean;
  /** Postgres: run as a named prepared statement (a hot statement whose planning costs more than its run). */
  readonly prepared?: boolean;
}

/**
 * A step that runs a helper of the engine in the program's place, inside the same transaction: one shared with other
 * operations (a session's content delete, a payload release), whose statements stay written once in its module.
 * Only an engine's statement table makes one (`call` in sql/engines/sqlite/program.ts and sql/engines/postgres/program.ts); the program
 * receives the rows it answers. It is a step like a statement: the same statements run as if the helper were called.
 */
export interface Call {
  /** The helper, given the SQLite driver (synchronous) or the Postgres query (asynchronous). */
  readonly call: (engine: never) => Row[] | Promise<Row[]>;
}

/** What a program yields: a statement, several run in order, or an engine's helper. */
export type Step = Statement | readonly Statement[] | Call;

/**
 * A primitive's steps: each `yield` hands a statement (or several, run in order) to the engine and receives the rows
 * of the last one. It holds no SQL and no engine, so it is the same code on SQLite and Postgres.
 */
export type Program<T> = Generator<Step, T, Row[]>;

/** A statement that answers rows. */
export function query(sql: string, params: readonly unknown[] = []): Statement {
  return { sql, params, rows: true };
}

/** A statement that answers rows, run as a named prepared statement on Postgres. */
export function prepared(sql: string, params: readonly unknown[] = []): Statement {
  return { sql, params, rows: true, prepared: true };
}

/** A statement that answers no rows (INSERT, UPDATE, DELETE without RETURNING). */
export function command(sql: string, params: readonly unknown[] = []): Statement {
  return { sql, params, rows: false };
}

/**
 * A step whose work the program waits for but does not read: an engine part's own writes or read-backs (an
 * import's batches). Synchronous on SQLite (its runner refuses a promise), awaited on Postgres; answers `[]`.
 */
export function routine(run: () => void | Promise<void>): Call {
  return {
    call: () => {
      const done = run();
      return done instanceof Promise ? done.then(() => []) : [];
    },
  };
}

/**
 * Runs `run` as a step of the program (`yield* perform(…)`) and answers its value: work of an engine's own part
 * that is not a statement, such as an awaited key look-up on Postgres. Synchronous on SQLite, awaited on Postgres.
 */
export function* perform<T>(run: () => T | Promise<T>): Generator<Call, T, Row[]> {
  const rows = yield {
    call: () => {
      const value = run();
      return value instanceof Promise ? value.then((v) => [{ value: v }]) : [{ value }];
    },
  };
  return rows[0]?.value as T;
}

/** True for a step that is an engine's helper rather than statements. */
export function isCall(step: Step): step is Call {
  return "call" in step;
}

/** The statements of one step, in order (an engine's table may answer one or several for the same step). */
export function statementsOf(step: Statement | readonly Statement[]): readonly Statement[] {
  return Array.isArray(step) ? step : [step as Statement];
}

/** The first row's column `name` as a number (counts and seqs come back as strings from Postgres); 0 without a row. */
export function countOf(rows: Row[], name = "n"): number {
  return Number(rows[0]?.[name] ?? 0);
}
