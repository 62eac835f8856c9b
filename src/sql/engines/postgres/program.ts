/**
 * Drives a program (sql/program.ts) on Postgres: asynchronously, each statement one round trip through
 * `query` (a transaction's, when the caller runs it inside `executor.transaction`).
 */
import type { Call, Program, Row } from "../../program.js";
import { isCall, statementsOf } from "../../program.js";
import type { Executor, Query } from "./client.js";

/** Runs `program` to its end over `query` and answers its result. */
export async function runProgram<T>(query: Query, program: Program<T>): Promise<T> {
  let step = program.next([]);
  while (!step.done) {
    if (isCall(step.value)) {
      step = program.next(await (step.value.call as (query: Query) => Promise<Row[]>)(query));
      continue;
    }
    let rows: Row[] = [];
    for (const statement of statementsOf(step.value))
      rows = await query<Row>(statement.sql, statement.params, statement.prepared);
    step = program.next(rows);
  }
  return step.value;
}

/** Runs `program` in one transaction of `executor`. */
export function runInTransaction<T>(executor: Executor, program: () => Program<T>): Promise<T> {
  return executor.transaction((query) => runProgram(query, program()));
}

/** A step that runs `helper` over the program's query in the program's place (in its transaction, if any). */
export function call(helper: (query: Query) => Promise<Row[]>): Call {
  return { call: helper };
}
