/**
 * Adopts what the reference (agents@0.22) wrote into the same SQLite database — a Durable Object's storage or a
 * file: its `assistant_*` and `cf_agents_*` tables are read page by page and written through the transfer
 * import's own inserts, then every adopted row is read back and compared. Synchronous, like every SQLite driver
 * here, so a store opened on such a database is complete before its first call.
 */

import {
  type AdoptionReport,
  type AdoptOptions,
  acceptCompaction,
  adoptionRecord,
  assertDroppable,
  assertReadBack,
  compareReadBack,
  emptyReport,
  REFERENCE_SOURCE,
  REFERENCE_TABLES,
  type ReferenceTable,
  reject,
  unusableSessionId,
  warnAdoption,
  warnIfNotClean,
} from "../../store/adopt/adopt.js";
import {
  contextRowName,
  type ReferenceContextTable,
  referenceContextRow,
} from "../../store/adopt/context.js";
import { type AdoptedItem, MessageOrder } from "../../store/adopt/order.js";
import { compareRegistryRow, referenceSessionInfo } from "../../store/adopt/registry.js";
import { type SessionInfoRow, toSessionInfo } from "../../store/registry-rows.js";
import type { SqlDriver } from "../connection/driver.js";
import { freeTextSql, sqlText } from "../connection/free-text.js";
import { type BlockReadRow, type EntryRow, entryOpener, readBlockRow } from "../sealed-context.js";
import { isReadonlyError } from "../search/indexing.js";
import { insertRegistryRow, insertRow, setLeaf, writeItems } from "../transfer/import.js";
import { verifyCompactions, verifyMessages } from "./verify.js";

const PAGE = 500;
const TABLE_LIST = REFERENCE_TABLES.map((t) => `'${t}'`).join(", ");
// Besides the data tables, the reference's derived FTS tables and its unused config table (dropped on request).
const DERIVED = ["assistant_fts", "cf_agents_search_fts", "assistant_config"];

/** The reference's tables present and whether their adoption is recorded: one statement, run on every open. */
function probe(driver: SqlDriver): { tables: ReferenceTable[]; recorded: boolean } {
  const rows = driver.all<{ name: string }>(
    `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${TABLE_LIST})
     UNION ALL SELECT 'recorded' FROM agent_adoptions WHERE source = ?`,
    [REFERENCE_SOURCE],
  );
  const names = new Set(rows.map((r) => r.name));
  return { tables: REFERENCE_TABLES.filter((t) => names.has(t)), recorded: names.has("recorded") };
}

/**
 * On open: adopts the reference's tables when they exist and their adoption is not recorded yet (then never
 * again); null when there was nothing to do. Rows that could not be adopted, or already stored differently, are
 * reported once on the console with the command that shows them.
 */
export function adoptOnOpen(driver: SqlDriver): AdoptionReport | null {
  const { tables, recorded } = probe(driver);
  if (tables.length === 0 || recorded) return null;
  let report: AdoptionReport;
  try {
    report = adopt(driver, tables, {});
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
  const { tables } = probe(driver);
  return tables.length === 0 ? null : adopt(driver, tables, options);
}

function adopt(driver: SqlDriver, tables: ReferenceTable[], options: AdoptOptions): AdoptionReport {
  const has = (t: ReferenceTable) => tables.includes(t);
  const report = emptyReport(tables);
  const now = new Date().toISOString();
  for (const sessionId of sessionIds(driver, has)) {
    report.sessions++;
    const unusable = unusableSessionId(sessionId);
    if (unusable !== undefined) {
      reject(report, { table: "assistant_messages", sessionId, id: "*", reason: unusable });
      continue;
    }
    adoptSession(driver, sessionId, has, report, now);
  }
  if (has("cf_agents_context_blocks")) adoptRows(driver, "cf_agents_context_blocks", report, now);
  if (has("cf_agents_search_entries")) adoptRows(driver, "cf_agents_search_entries", report, now);
  driver.run(
    `INSERT INTO agent_adoptions (source, adopted_at, report) VALUES (?, ?, ?)
     ON CONFLICT (source) DO UPDATE SET adopted_at = excluded.adopted_at, report = excluded.report`,
    adoptionRecord(report),
  );
  if (options.dropSource) dropSource(driver, tables, report);
  return report;
}

function* sessionIds(driver: SqlDriver, has: (t: ReferenceTable) => boolean): Generator<string> {
  const sources = [
    has("assistant_messages") ? "SELECT session_id AS id FROM assistant_messages" : "",
    has("assistant_compactions") ? "SELECT session_id FROM assistant_compactions" : "",
    has("assistant_sessions") ? "SELECT id FROM assistant_sessions" : "",
  ].filter(Boolean);
  if (sources.length === 0) return;
  let after = "";
  let first = true;
  for (;;) {
    const ids = driver.column<string>(
      `SELECT id FROM (${sources.join(" UNION ")}) WHERE typeof(id) = 'text' AND (? OR id > ?) ORDER BY id LIMIT ?`,
      [first ? 1 : 0, after, PAGE],
    );
    for (const id of ids) yield id;
    if (ids.length < PAGE) return;
    after = ids.at(-1)!;
    first = false;
  }
}

interface MessageRow {
  rid: number;
  id: unknown;
  parent_id: string | null;
  parent_rid: number | null;
  role: unknown;
  content: unknown;
  created_at: unknown;
}

function adoptSession(
  driver: SqlDriver,
  sessionId: string,
  has: (t: ReferenceTable) => boolean,
  report: AdoptionReport,
  now: string,
): void {
  const info = has("assistant_sessions")
    ? driver.get<Record<string, unknown>>("SELECT * FROM assistant_sessions WHERE id = ?", [sessionId])
    : undefined;
  const row = info && referenceSessionInfo(info, now);
  if (typeof row === "string") {
    reject(report, { table: "assistant_sessions", sessionId, id: sessionId, reason: row });
  } else if (row) {
    if (insertRegistryRow(driver, row)) report.registry.inserted++;
    else report.registry.skipped++;
    const stored = driver.get<SessionInfoRow>("SELECT * FROM agent_sessions WHERE id = ?", [row.id]);
    compareRegistryRow(report, row, stored && toSessionInfo(stored));
  }
  const order = new MessageOrder(sessionId, report, now);
  let num: number | undefined;
  // A message and the payloads it points at come out of the order together, so they share one batch.
  const write = (items: AdoptedItem[]) => {
    if (items.length === 0) return;
    num = writeItems(driver, sessionId, items, report);
  };
  const inserted = report.messages.inserted;
  if (has("assistant_messages")) {
    // rowid order is insertion order, and a parent always existed before its child was appended.
    for (let after = 0; ; ) {
      const rows = driver.all<MessageRow>(
        `SELECT m.rowid AS rid, m.id, m.parent_id, p.rowid AS parent_rid, m.role, CAST(m.content AS BLOB) AS content,
           m.created_at FROM assistant_messages m
         LEFT JOIN assistant_messages p ON p.id = m.parent_id AND p.session_id = m.session_id
         WHERE m.session_id = ? AND m.rowid > ? ORDER BY m.rowid LIMIT ?`,
        [sessionId, after, PAGE],
      );
      write(
        rows.flatMap((row) =>
          order.accept({
            id: row.id,
            parentId: typeof row.parent_id === "string" ? row.parent_id : null,
            parentFound: row.parent_rid !== null,
            parentBefore: row.parent_rid !== null && row.parent_rid < row.rid,
            role: row.role,
            content: sqlText(row.content),
            createdAt: row.created_at,
          }),
        ),
      );
      if (rows.length < PAGE) break;
      after = rows.at(-1)!.rid;
    }
    write(order.finish());
  }
  if (num !== undefined && report.messages.inserted > inserted)
    setLeaf(driver, num, referenceLeaf(driver, sessionId));
  const overlays = has("assistant_compactions")
    ? adoptCompactions(driver, sessionId, report, now)
    : new Map();
  if (order.written.size > 0) verifyMessages(driver, sessionId, order, report);
  if (overlays.size > 0) verifyCompactions(driver, sessionId, overlays, report);
}

// The reference's own choice of the latest leaf: the newest childless row. Written as NOT EXISTS so the child
// probe uses the reference's parent_id index (`+` keeps the planner off the session index, which makes it O(n²)).
function referenceLeaf(driver: SqlDriver, sessionId: string): string | null {
  return (
    driver.get<{ id: string }>(
      `SELECT m.id FROM assistant_messages m WHERE m.session_id = ?
         AND NOT EXISTS (SELECT 1 FROM assistant_messages c WHERE c.parent_id = m.id AND +c.session_id = m.session_id)
       ORDER BY m.created_at DESC, m.rowid DESC LIMIT 1`,
      [sessionId],
    )?.id ?? null
  );
}

function adoptCompactions(
  driver: SqlDriver,
  sessionId: string,
  report: AdoptionReport,
  now: string,
): Map<string, string> {
  const written = new Map<string, string>();
  for (let after = 0; ; ) {
    const rows = driver.all<{
      rid: number;
      id: unknown;
      summary: unknown;
      from_message_id: unknown;
      to_message_id: unknown;
      created_at: unknown;
    }>(
      `SELECT rowid AS rid, id, CAST(summary AS BLOB) AS summary, from_message_id, to_message_id, created_at
       FROM assistant_compactions WHERE session_id = ? AND rowid > ? ORDER BY rowid LIMIT ?`,
      [sessionId, after, PAGE],
    );
    const items = [];
    for (const row of rows) {
      const compaction = acceptCompaction(
        report,
        sessionId,
        { ...row, summary: sqlText(row.summary) },
        now,
        written,
      );
      if (compaction) items.push({ kind: "compaction" as const, compaction });
    }
    if (items.length > 0) writeItems(driver, sessionId, items, report);
    if (rows.length < PAGE) return written;
    after = rows.at(-1)!.rid;
  }
}

function adoptRows(
  driver: SqlDriver,
  table: ReferenceContextTable,
  report: AdoptionReport,
  now: string,
): void {
  const blocks = table === "cf_agents_context_blocks";
  const counts = blocks ? report.blocks : report.entries;
  for (let after = 0; ; ) {
    const rows = driver.all<{ rid: number; label: unknown; key: unknown; content: unknown }>(
      `SELECT rowid AS rid, label, ${blocks ? "NULL AS key" : "key"}, CAST(content AS BLOB) AS content FROM ${table}
       WHERE rowid > ? ORDER BY rowid LIMIT ?`,
      [after, PAGE],
    );
    for (const raw of rows) {
      const content = sqlText(raw.content);
      const row = referenceContextRow(report, table, raw.label, raw.key, content);
      if (!row) continue;
      if (insertRow(driver, row, now)) counts.inserted++;
      else counts.skipped++;
      // Read back opened: a row of an owner with a key was sealed (sealed-context.ts).
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
      if (stored) {
        const read =
          row.kind === "block"
            ? readBlockRow(driver, row.key, stored as BlockReadRow)
            : entryOpener(driver, row.label)(row.key, stored as EntryRow);
        compareReadBack(report, content, read, contextRowName(row));
      } else assertReadBack(1, "block or entry row(s)", contextRowName(row));
    }
    if (rows.length < PAGE) return;
    after = rows.at(-1)!.rid;
  }
}

function dropSource(driver: SqlDriver, tables: ReferenceTable[], report: AdoptionReport): void {
  assertDroppable(report);
  driver.transaction(() => {
    for (const table of [...tables, ...DERIVED]) driver.run(`DROP TABLE IF EXISTS ${table}`);
  });
  report.dropped = true;
}
