/**
 * The records of context rows on SQLite (contract/context.ts ContextRecord): the `session_id` and `owner` columns
 * of blocks and entries, added by schema step 22 with their partial indexes and a backfill of the rows stored
 * before (context/legacy-records.ts). The steps that list and erase by them are sql/context-records/steps.ts over
 * sql/context-records/sqlite.ts (which also holds the upsert's SET that keeps a record), run here for the
 * erasure by key, the known ids and the backfill, and by context-store.ts for the keys and the erasure by record.
 */
import { LEGACY_RULE } from "../context/legacy-records.js";
import { sqliteRecords } from "../sql/context-records/sqlite.js";
import {
  backfillRecords,
  deleteKeyed as deleteKeyedProgram,
  type KnownIds,
  knownIds as knownIdsProgram,
} from "../sql/context-records/steps.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import { runProgram } from "../sql/engines/sqlite/program.js";

/**
 * Deletes, in the caller's transaction, every block and entry recorded for session `id`, and the unrecorded blocks
 * of `keys` and entries filed under them; how many of each.
 */
export function deleteKeyed(
  driver: SqlDriver,
  id: string,
  keys: readonly string[],
): { blocks: number; entries: number } {
  return runProgram(driver, deleteKeyedProgram(sqliteRecords, id, keys));
}

/** Which of `ids` are stored sessions (registered or holding a head), and which are owners of registered ones. */
export function knownIds(driver: SqlDriver, ids: readonly string[]): KnownIds {
  return runProgram(driver, knownIdsProgram(sqliteRecords, ids));
}

/** Schema step 22: the columns, their indexes, and the backfill of the rows stored before. */
export function addContextRecords(driver: SqlDriver): void {
  for (const table of ["agent_context_blocks", "agent_search_entries"]) {
    const columns = driver.column<string>(`SELECT name FROM pragma_table_info('${table}')`);
    if (!columns.includes("session_id")) driver.run(`ALTER TABLE ${table} ADD COLUMN session_id TEXT`);
    if (!columns.includes("owner")) driver.run(`ALTER TABLE ${table} ADD COLUMN owner TEXT`);
    driver.run(
      `CREATE INDEX IF NOT EXISTS ${table}_session ON ${table}(session_id) WHERE session_id IS NOT NULL`,
    );
    driver.run(`CREATE INDEX IF NOT EXISTS ${table}_owner ON ${table}(owner) WHERE owner IS NOT NULL`);
  }
  runProgram(driver, backfillRecords(sqliteRecords, LEGACY_RULE));
}
