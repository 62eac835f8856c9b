/**
 * SQLite's adoption table (the program: sql/adopt/steps.ts): the reference's rows read by `rowid`, which is their
 * insertion order, and written a page at a time through the transfer import's own inserts, synchronously, so a
 * store opened on such a database is complete before its first call; every adopted row is read back from our
 * tables (adopt/verify.ts).
 */

import type { SessionInfo } from "../../contract/registry.js";
import {
  ADOPT_PAGE,
  type AdoptionRun,
  type AdoptionStatements,
  type RowsAdoption,
  type SessionAdoption,
} from "../../sql/adopt/steps.js";
import type { SqlDriver } from "../../sql/engines/sqlite/driver.js";
import { freeTextSql, sqlText } from "../../sql/engines/sqlite/free-text.js";
import { command, query, routine } from "../../sql/program.js";
import { insertRegistryRow, setLeaf, writeItems } from "../../sql/transfer/sqlite-import.js";
import {
  assertReadBack,
  compareReadBack,
  REFERENCE_SOURCE,
  REFERENCE_TABLES,
  type ReferenceTable,
} from "../../store/adopt/adopt.js";
import { contextRowName } from "../../store/adopt/context.js";
import { compareRegistryRow } from "../../store/adopt/registry.js";
import { type SessionInfoRow, toSessionInfo } from "../../store/registry-rows.js";
import { openedName } from "../../store/session-names.js";
import { verifyCompactions, verifyMessages } from "../adopt/verify.js";
import { type BlockReadRow, type EntryRow, entryOpener, readBlockRow } from "../sealed-context.js";
import { insertRow, SQLITE_IMPORT } from "../transfer/import.js";

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
// The reference's own choice of the latest leaf: the newest childless row. Written as NOT EXISTS so the child
// probe uses the reference's parent_id index (`+` keeps the planner off the session index, which makes it O(n²)).
const LEAF = `SELECT m.id FROM assistant_messages m WHERE m.session_id = ?
         AND NOT EXISTS (SELECT 1 FROM assistant_messages c WHERE c.parent_id = m.id AND +c.session_id = m.session_id)
       ORDER BY m.created_at DESC, m.rowid DESC LIMIT 1`;

/** The statements and routines of an adoption on `driver` (run outside a transaction: each write is its own). */
export function sqliteAdoption(driver: SqlDriver): AdoptionStatements {
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
    session: (sessionId, info, run) => sessionAdoption(driver, sessionId, info, run),
    rows: (run) => rowsAdoption(driver, run),
    drop: (tables) =>
      routine(() =>
        driver.transaction(() => {
          for (const table of [...tables, ...DERIVED]) driver.run(`DROP TABLE IF EXISTS ${table}`);
        }),
      ),
  };
}

// The registry row is written and compared first; messages and overlays a page (one transaction) at a time.
function sessionAdoption(
  driver: SqlDriver,
  sessionId: string,
  info: SessionInfo | null,
  { report }: AdoptionRun,
): SessionAdoption {
  let num: number | undefined;
  let inserted = 0;
  return {
    open: () =>
      routine(() => {
        if (info) {
          if (insertRegistryRow(driver, SQLITE_IMPORT, info)) report.registry.inserted++;
          else report.registry.skipped++;
          const stored = driver.get<SessionInfoRow>("SELECT * FROM agent_sessions WHERE id = ?", [info.id]);
          // Compared as read: a name sealed for its owner opened (store/session-names.ts).
          compareRegistryRow(report, info, stored && openedName(driver.keys, toSessionInfo(stored)));
        }
        inserted = report.messages.inserted;
      }),
    write: (items) =>
      routine(() => {
        // A message and the payloads it points at come out of the order together, so they share one batch.
        if (items.length > 0) num = writeItems(driver, SQLITE_IMPORT, sessionId, items, report);
      }),
    close: (order, overlays) =>
      routine(() => {
        if (num !== undefined && report.messages.inserted > inserted) {
          setLeaf(driver, num, driver.get<{ id: string }>(LEAF, [sessionId])?.id ?? null);
        }
        if (order.written.size > 0) verifyMessages(driver, sessionId, order, report);
        if (overlays.size > 0) verifyCompactions(driver, sessionId, overlays, report);
      }),
  };
}

// Each block or entry is inserted and read back (opened: a row of an owner with a key was sealed) in turn.
function rowsAdoption(driver: SqlDriver, { report, now }: AdoptionRun): RowsAdoption {
  return {
    write: (table, rows) =>
      routine(() => {
        const counts = table === "cf_agents_context_blocks" ? report.blocks : report.entries;
        for (const row of rows) {
          if (insertRow(driver, row, now)) counts.inserted++;
          else counts.skipped++;
          const stored =
            row.kind === "block"
              ? driver.get<BlockReadRow>(
                  `SELECT ${freeTextSql("content", "content")}, sealed, session_id, owner FROM agent_context_blocks
               WHERE key = ?`,
                  [row.key],
                )
              : driver.get<EntryRow>(
                  `SELECT ${freeTextSql("content", "content")}, sealed_chars, session_id, owner FROM agent_search_entries
               WHERE label = ? AND key = ?`,
                  [row.label, row.key],
                );
          if (!stored) assertReadBack(1, "block or entry row(s)", contextRowName(row));
          const read =
            row.kind === "block"
              ? readBlockRow(driver, row.key, stored as BlockReadRow)
              : entryOpener(driver, row.label)(row.key, stored as EntryRow);
          compareReadBack(report, row.content, read, contextRowName(row));
        }
      }),
    close: () => routine(() => {}),
  };
}
