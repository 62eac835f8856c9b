/**
 * Adopts what the reference (agents@0.22) wrote into the same SQLite database — a Durable Object's storage or a
 * file: the program sql/adopt/steps.ts over SQLite's table (sql/adopt/sqlite.ts), run synchronously, so a store
 * opened on such a database is complete before its first call.
 */

import { sqliteAdoption } from "../../sql/adopt/sqlite.js";
import { adoption, probe } from "../../sql/adopt/steps.js";
import type { SqlDriver } from "../../sql/engines/sqlite/driver.js";
import { runProgram } from "../../sql/engines/sqlite/program.js";
import { isReadonlyError } from "../../sql/engines/sqlite/readonly.js";
import {
  type AdoptionReport,
  type AdoptOptions,
  warnAdoption,
  warnIfNotClean,
} from "../../store/adopt/adopt.js";
import { sqliteAdoptionWrites } from "./import.js";

/**
 * On open: adopts the reference's tables when they exist and their adoption is not recorded yet (then never
 * again); null when there was nothing to do. Rows that could not be adopted, or already stored differently, are
 * reported once on the console with the command that shows them.
 */
export function adoptOnOpen(driver: SqlDriver): AdoptionReport | null {
  const table = sqliteAdoption(driver, sqliteAdoptionWrites(driver));
  const { tables, recorded } = runProgram(driver, probe(table));
  if (tables.length === 0 || recorded) return null;
  let report: AdoptionReport;
  try {
    report = runProgram(driver, adoption(table, tables, {}));
  } catch (error) {
    // A read-only connection cannot adopt; it still reads our tables, and the next writable open adopts.
    if (!isReadonlyError(error)) throw error;
    warnAdoption(
      "this read-only connection cannot adopt the reference's tables found in the database; open it writable once (or run agent-session adopt)",
    );
    return null;
  }
  warnIfNotClean(report, "<file>");
  return report;
}

/** Adopts the reference's tables now (again, idempotently, when already recorded); null when there are none. */
export function adoptReference(driver: SqlDriver, options: AdoptOptions = {}): AdoptionReport | null {
  const table = sqliteAdoption(driver, sqliteAdoptionWrites(driver));
  const { tables } = runProgram(driver, probe(table));
  return tables.length === 0 ? null : runProgram(driver, adoption(table, tables, options));
}
