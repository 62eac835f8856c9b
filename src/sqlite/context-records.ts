/**
 * The records of context rows on SQLite (contract/context.ts ContextRecord): the `session_id` and `owner` columns
 * of blocks and entries, added by schema step 22 with their partial indexes and a backfill of the rows stored
 * before (context/legacy-records.ts), and the SQL that keeps, lists and erases by them.
 */
import { candidateIds, legacyRecord } from "../context/legacy-records.js";
import { recordColumns } from "../context/records.js";
import type { ContextRecord } from "../contract/context.js";
import type { SqlDriver } from "./connection/driver.js";

/** How many keys the backfill resolves per statement. */
const BATCH = 500;

/** An upsert's SET of the record: the first recorded write decides it, a later one keeps it. */
export const KEEP_RECORD = `session_id = CASE WHEN session_id IS NULL AND owner IS NULL THEN excluded.session_id ELSE session_id END,
  owner = CASE WHEN session_id IS NULL AND owner IS NULL THEN excluded.owner ELSE owner END`;

/** The WHERE of the rows recorded so (`?`, `?`: the session id and the owner, one of them null). */
export const RECORDED = "(session_id = ? OR owner = ?)";

/** The parameters of {@link RECORDED}. */
export function recordParams(record: ContextRecord | undefined): [string | null, string | null] {
  const { sessionId, owner } = recordColumns(record);
  return [sessionId, owner];
}

// What a removal of session `?` may take of the rows a list names: unrecorded ones, or its own. A key listed by
// label never removes another session's or an owner's row.
const UNRECORDED_OR_OWN = "owner IS NULL AND (session_id IS NULL OR session_id = ?)";

/**
 * Deletes, in the caller's transaction, every block and entry recorded for session `id`, and the unrecorded blocks
 * of `keys` and entries filed under them; how many of each.
 */
export function deleteKeyed(
  driver: SqlDriver,
  id: string,
  keys: readonly string[],
): { blocks: number; entries: number } {
  const json = JSON.stringify(keys);
  const blocks = driver.all(
    `DELETE FROM agent_context_blocks WHERE session_id = ?
       OR (key IN (SELECT value FROM json_each(?)) AND ${UNRECORDED_OR_OWN}) RETURNING 1 AS gone`,
    [id, json, id],
  ).length;
  const filed = `session_id = ? OR (label IN (SELECT value FROM json_each(?)) AND ${UNRECORDED_OR_OWN})`;
  driver.run(
    `DELETE FROM agent_search_entries_fts WHERE rowid IN (SELECT seq FROM agent_search_entries WHERE ${filed})`,
    [id, json, id],
  );
  const gone = driver.all(`DELETE FROM agent_search_entries WHERE ${filed} RETURNING 1 AS gone`, [
    id,
    json,
    id,
  ]);
  return { blocks, entries: gone.length };
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
  backfill(driver, driver.column<string>("SELECT key FROM agent_context_blocks"), (key, record) =>
    driver.run("UPDATE agent_context_blocks SET session_id = ?, owner = ? WHERE key = ?", [...record, key]),
  );
  backfill(
    driver,
    driver.column<string>("SELECT DISTINCT label FROM agent_search_entries"),
    (label, record) =>
      driver.run("UPDATE agent_search_entries SET session_id = ?, owner = ? WHERE label = ?", [
        ...record,
        label,
      ]),
  );
}

function backfill(
  driver: SqlDriver,
  names: readonly string[],
  write: (name: string, record: [string | null, string | null]) => void,
): void {
  for (let at = 0; at < names.length; at += BATCH) {
    const batch = names.slice(at, at + BATCH);
    const { sessions, owners } = knownIds(driver, [...new Set(batch.flatMap(candidateIds))]);
    for (const name of batch) {
      const record = legacyRecord(name, sessions, owners);
      if (record) write(name, recordParams(record));
    }
  }
}

/** Which of `ids` are stored sessions (registered or holding a head), and which are owners of registered ones. */
export function knownIds(
  driver: SqlDriver,
  ids: readonly string[],
): { sessions: Set<string>; owners: Set<string> } {
  const json = JSON.stringify(ids);
  const sessions = driver.column<string>(
    `SELECT value FROM json_each(?) WHERE value IN (SELECT id FROM agent_sessions)
       OR value IN (SELECT session_id FROM agent_session_heads)`,
    [json],
  );
  const owners = driver.column<string>(
    "SELECT value FROM json_each(?) WHERE value IN (SELECT owner FROM agent_sessions WHERE owner IS NOT NULL)",
    [json],
  );
  return { sessions: new Set(sessions), owners: new Set(owners) };
}
