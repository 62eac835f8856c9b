/**
 * SQLite's statements of the records of context rows (steps.ts has the steps), and their runs for the erasure by
 * key, the known ids and schema step 22 (context-store.ts runs the keys and the erasure by record): an entry's delete
 * drops its contentless FTS row first, two statements; a DELETE counts what it took by RETURNING a row for each; the
 * backfill reads every name at once and resolves them in batches.
 */

import { LEGACY_RULE } from "../../context/legacy-records.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { sqlText } from "../engines/sqlite/free-text.js";
import { runProgram } from "../engines/sqlite/program.js";
import { command, query, type Row } from "../program.js";
import {
  backfillRecords,
  type ContextTable,
  deleteKeyed as deleteKeyedProgram,
  type KnownIds,
  knownIds as knownIdsProgram,
  type RecordStatements,
} from "./steps.js";

/** An upsert's SET of the record: the first recorded write decides it, a later one keeps it. */
export const KEEP_RECORD = `session_id = CASE WHEN session_id IS NULL AND owner IS NULL THEN excluded.session_id ELSE session_id END,
  owner = CASE WHEN session_id IS NULL AND owner IS NULL THEN excluded.owner ELSE owner END`;

/** The WHERE of the rows recorded so (`?`, `?`: the session id and the owner, one of them null). */
export const RECORDED = "(session_id = ? OR owner = ?)";

const TABLE: Record<ContextTable, string> = {
  blocks: "agent_context_blocks",
  entries: "agent_search_entries",
};
const NAME: Record<ContextTable, string> = { blocks: "key", entries: "label" };

// What a removal of session `?` may take of the rows a list names: unrecorded ones, or its own.
const UNRECORDED_OR_OWN = "owner IS NULL AND (session_id IS NULL OR session_id = ?)";
const FILED = `session_id = ? OR (label IN (SELECT value FROM json_each(?)) AND ${UNRECORDED_OR_OWN})`;
const ENTRIES_FTS =
  "DELETE FROM agent_search_entries_fts WHERE rowid IN (SELECT seq FROM agent_search_entries WHERE";

/** The statement table of context records on SQLite. */
export const sqliteRecords: RecordStatements = {
  // Byte order of UTF-8: SQLite compares text with memcmp (BINARY), which is that order.
  recordedKeys: (record) =>
    query(`SELECT CAST(key AS BLOB) AS raw FROM agent_context_blocks WHERE ${RECORDED} ORDER BY key`, record),
  keyOf: (row) => sqlText(row.raw),
  deleteRecorded: (table, record) => {
    const gone = query(`DELETE FROM ${TABLE[table]} WHERE ${RECORDED} RETURNING 1 AS gone`, record);
    return table === "blocks" ? gone : [command(`${ENTRIES_FTS} ${RECORDED})`, record), gone];
  },
  deleteKeyed: (table, id, names) => {
    const json = JSON.stringify(names);
    if (table === "blocks") {
      return query(
        `DELETE FROM agent_context_blocks WHERE session_id = ?
       OR (key IN (SELECT value FROM json_each(?)) AND ${UNRECORDED_OR_OWN}) RETURNING 1 AS gone`,
        [id, json, id],
      );
    }
    return [
      command(`${ENTRIES_FTS} ${FILED})`, [id, json, id]),
      query(`DELETE FROM agent_search_entries WHERE ${FILED} RETURNING 1 AS gone`, [id, json, id]),
    ];
  },
  gone: (rows: Row[]) => rows.length,
  knownSessions: (ids) =>
    query(
      `SELECT value AS id FROM json_each(?) WHERE value IN (SELECT id FROM agent_sessions)
       OR value IN (SELECT session_id FROM agent_session_heads)`,
      [JSON.stringify(ids)],
    ),
  knownOwners: (ids) =>
    query(
      "SELECT value AS owner FROM json_each(?) WHERE value IN (SELECT owner FROM agent_sessions WHERE owner IS NOT NULL)",
      [JSON.stringify(ids)],
    ),
  paged: false,
  names: (table) =>
    query(
      table === "blocks"
        ? "SELECT key AS name FROM agent_context_blocks"
        : "SELECT DISTINCT label AS name FROM agent_search_entries",
    ),
  setRecord: (table, name, record) =>
    command(`UPDATE ${TABLE[table]} SET session_id = ?, owner = ? WHERE ${NAME[table]} = ?`, [
      ...record,
      name,
    ]),
};

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
