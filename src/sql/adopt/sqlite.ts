/**
 * SQLite's adoption table (the program: steps.ts): the reference's rows read by `rowid`, which is their insertion
 * order, and written a page at a time through the transfer import's own inserts, synchronously, so a store opened
 * on such a database is complete before its first call; every adopted row is read back from our tables (the writes:
 * sqlite/adopt/import.ts, handed in as {@link AdoptionWrites}).
 */

import { REFERENCE_SOURCE, REFERENCE_TABLES, type ReferenceTable } from "../../store/adopt/adopt.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { sqlText } from "../engines/sqlite/free-text.js";
import { command, query, routine } from "../program.js";
import { ADOPT_PAGE, type AdoptionStatements, type AdoptionWrites } from "./steps.js";

const TABLE_LIST = REFERENCE_TABLES.map((t) => `'${t}'`).join(", ");
// Besides the data tables, the reference's derived FTS tables and its unused config table (dropped on request).
const DERIVED = ["assistant_fts", "cf_agents_search_fts", "assistant_config"];
const SESSION_IDS = {
  assistant_messages: "SELECT session_id AS id FROM assistant_messages",
  assistant_compactions: "SELECT session_id FROM assistant_compactions",
  assistant_sessions: "SELECT id FROM assistant_sessions",
} as Record<ReferenceTable, string>;
// rowid order is insertion order, and a parent always existed before its child was appended.
const MESSAGES = `SELECT m.rowid AS rid, m.id, m.parent_id, p.rowid IS NOT NULL AS parent_found,
           p.rowid < m.rowid AS parent_before, m.role, CAST(m.content AS BLOB) AS content, m.created_at
         FROM assistant_messages m
         LEFT JOIN assistant_messages p ON p.id = m.parent_id AND p.session_id = m.session_id
         WHERE m.session_id = ? AND m.rowid > ? ORDER BY m.rowid LIMIT ?`;
const COMPACTIONS = `SELECT rowid AS rid, id, CAST(summary AS BLOB) AS summary, from_message_id, to_message_id, created_at
       FROM assistant_compactions WHERE session_id = ? AND rowid > ? ORDER BY rowid LIMIT ?`;

/**
 * The statements and routines of an adoption on `driver` (run outside a transaction: each write is its own),
 * writing through `writes` (sqlite/adopt/import.ts).
 */
export function sqliteAdoption(driver: SqlDriver, writes: AdoptionWrites): AdoptionStatements {
  // A listing by rowid continues after the last row's.
  const after = (last: Record<string, unknown> | undefined) => (last ? last.rid : 0);
  return {
    probe: () =>
      query(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${TABLE_LIST})
     UNION ALL SELECT 'recorded' FROM agent_adoptions WHERE source = ?`,
        [REFERENCE_SOURCE],
      ),
    sessionIds: (sources) => (last) =>
      query(
        `SELECT id FROM (${sources.map((t) => SESSION_IDS[t]).join(" UNION ")}) WHERE typeof(id) = 'text' AND (? OR id > ?) ORDER BY id LIMIT ?`,
        [last ? 0 : 1, last ? last.id : "", ADOPT_PAGE],
      ),
    referenceSession: (sessionId) => query("SELECT * FROM assistant_sessions WHERE id = ?", [sessionId]),
    messages: (sessionId) => (last) => query(MESSAGES, [sessionId, after(last), ADOPT_PAGE]),
    compactions: (sessionId) => (last) => query(COMPACTIONS, [sessionId, after(last), ADOPT_PAGE]),
    contextRows: (table) => (last) =>
      query(
        `SELECT rowid AS rid, label, ${table === "cf_agents_context_blocks" ? "NULL AS key" : "key"}, CAST(content AS BLOB) AS content FROM ${table}
       WHERE rowid > ? ORDER BY rowid LIMIT ?`,
        [after(last), ADOPT_PAGE],
      ),
    text: sqlText,
    record: (values) =>
      command(
        `INSERT INTO agent_adoptions (source, adopted_at, report) VALUES (?, ?, ?)
     ON CONFLICT (source) DO UPDATE SET adopted_at = excluded.adopted_at, report = excluded.report`,
        values,
      ),
    session: writes.session,
    rows: writes.rows,
    drop: (tables) =>
      routine(() =>
        driver.transaction(() => {
          for (const table of [...tables, ...DERIVED]) driver.run(`DROP TABLE IF EXISTS ${table}`);
        }),
      ),
  };
}
