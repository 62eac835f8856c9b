/**
 * Drives a program (sql/program.ts) on SQLite: synchronously, each statement through the driver's statement
 * cache. The caller decides the transaction (`driver.transaction(() => runProgram(driver, p))`), because some callers
 * already hold one.
 */
import { SessionError } from "../../../errors.js";
import type { Call, Program, Row } from "../../program.js";
import { isCall, statementsOf } from "../../program.js";
import type { SqlDriver, SqlValue } from "./driver.js";

/** Runs `program` to its end on `driver` and answers its result. */
export function runProgram<T>(driver: SqlDriver, program: Program<T>): T {
  let step = program.next([]);
  while (!step.done) {
    if (isCall(step.value)) {
      const rows = (step.value.call as (driver: SqlDriver) => Row[] | Promise<Row[]>)(driver);
      // A program runs inside one synchronous transaction: work that would finish later would run outside it.
      if (rows instanceof Promise)
        throw new SessionError("STORAGE", "A SQLite program's step answered a promise");
      step = program.next(rows);
      continue;
    }
    let rows: Row[] = [];
    for (const statement of statementsOf(step.value)) {
      const params = statement.params as readonly SqlValue[];
      if (statement.rows) rows = driver.all<Row>(statement.sql, params);
      else {
        driver.run(statement.sql, params);
        rows = [];
      }
    }
    step = program.next(rows);
  }
  return step.value;
}

/** Runs `program` in one write transaction. */
export function runInTransaction<T>(driver: SqlDriver, program: () => Program<T>): T {
  return driver.transaction(() => runProgram(driver, program()));
}

/** A step that runs `helper` on the driver in the program's place (synchronously, in the program's transaction). */
export function call(helper: (driver: SqlDriver) => Row[]): Call {
  return { call: helper };
}
