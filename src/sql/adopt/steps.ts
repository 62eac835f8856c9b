/**
 * Adoption of the reference's tables (store/adopt/adopt.ts), written once for both SQL engines: which sessions to
 * take, each one's registry row, messages (parents first, store/adopt/order.ts) and overlays, then the context
 * blocks and search entries, the record and the optional drop. Reads are statements of the engine's table
 * (`sqlite.ts`, `postgres.ts` beside this file), each listing in keyset pages; writes and
 * read-backs are routines the engine hands that table (`AdoptionWrites`: sqlite/ and postgres/adopt/import.ts),
 * because they go through each engine's own transfer import (SQLite writes
 * a page at a time, synchronously on open; Postgres batches and routes as its import does).
 */

import type { SessionInfo } from "../../contract/registry.js";
import type { TransferItem, TransferRow } from "../../contract/transfer.js";
import {
  type AdoptionReport,
  type AdoptOptions,
  acceptCompaction,
  adoptionRecord,
  assertDroppable,
  emptyReport,
  REFERENCE_TABLES,
  type ReferenceTable,
  type referenceCompaction,
  reject,
  unusableSessionId,
} from "../../store/adopt/adopt.js";
import { type ReferenceContextTable, referenceContextRow } from "../../store/adopt/context.js";
import { MessageOrder, type ReferenceMessageRow } from "../../store/adopt/order.js";
import { referenceSessionInfo } from "../../store/adopt/registry.js";
import type { Program, Row, Statement, Step } from "../program.js";

/** Rows per page of every listing an adoption reads. */
export const ADOPT_PAGE = 500;

/** The statement reading the page after `last` (the previous page's last row, none at first); undefined: no more. */
export type Pages = (last: Row | undefined) => Statement | undefined;

/** What is written for a session after its registry row: messages with their payloads, and overlays. */
export type AdoptedWrite = Exclude<TransferItem, { kind: "session" | "checkpoint" }>;

/** What an adoption's routines share: its report, its time, and which of the reference's tables exist. */
export interface AdoptionRun {
  readonly report: AdoptionReport;
  readonly now: string;
  has(table: ReferenceTable): boolean;
}

/** One session's writes and read-backs on an engine, in the order the program calls them. */
export interface SessionAdoption {
  /** Before the messages: the registry row (`info`, when the reference has a usable one). */
  open(): Step;
  /** Items handed out by the order or accepted overlays (possibly none). */
  write(items: AdoptedWrite[]): Step;
  /** After the overlays: finishes the import (the latest leaf) and compares every adopted row with what is stored. */
  close(order: Pick<MessageOrder, "written" | "inline">, overlays: Map<string, string>): Step;
}

/** The context rows' writes and read-backs on an engine. */
export interface RowsAdoption {
  /** Rows of one table (possibly none), counted as its rows; blocks come before entries. */
  write(table: ReferenceContextTable, rows: TransferRow[]): Step;
  /** After both tables: writes and compares what is not yet. */
  close(): Step;
}

/** An adoption's writes, each engine's own (its transfer import's writes), handed to its table by the engine. */
export type AdoptionWrites = Pick<AdoptionStatements, "session" | "rows">;

/** An engine's adoption table: statements answering the shapes named here, and the routines it writes through. */
export interface AdoptionStatements {
  /** Rows `{ name }`: each reference table found, and `recorded` when the adoption is recorded. */
  probe(): Statement;
  /** Rows `{ id }`: session ids (text) of the given tables, in the engine's id order. */
  sessionIds(sources: readonly ReferenceTable[]): Pages;
  /** The reference's `assistant_sessions` row of a session (zero or one). */
  referenceSession(sessionId: string): Statement;
  /**
   * A session's reference messages in storage order: `id, parent_id, role, content, created_at`, and
   * `parent_found`, `parent_before` (truthy when the parent is a message of the session, and earlier in the order).
   */
  messages(sessionId: string): Pages;
  /** A session's reference overlays: `id, summary, from_message_id, to_message_id, created_at`. */
  compactions(sessionId: string): Pages;
  /** A context table's rows: `label, key, content`. */
  contextRows(table: ReferenceContextTable): Pages;
  /** A text column as read (SQLite reads the reference's text as bytes, which may not be UTF-8). */
  text(value: unknown): string;
  /** Writes the adoption's record (values: source, adopted_at, report). */
  record(values: [string, string, string]): Statement;
  session(sessionId: string, info: SessionInfo | null, run: AdoptionRun): SessionAdoption;
  rows(run: AdoptionRun): RowsAdoption;
  /** Drops the reference's tables (in one transaction). */
  drop(tables: readonly ReferenceTable[]): Step;
}

/** The reference's tables found and whether their adoption is recorded (one statement, run on every open). */
export function* probe(table: AdoptionStatements): Program<{ tables: ReferenceTable[]; recorded: boolean }> {
  const names = new Set((yield table.probe()).map((row) => row.name));
  return { tables: REFERENCE_TABLES.filter((t) => names.has(t)), recorded: names.has("recorded") };
}

// Reads a listing page by page; `page` runs on each page before the next is read.
function* paged(pages: Pages, page: (rows: Row[]) => Generator<Step, void, Row[]>): Program<void> {
  for (let last: Row | undefined; ; ) {
    const statement = pages(last);
    if (!statement) return;
    const rows = yield statement;
    yield* page(rows);
    if (rows.length < ADOPT_PAGE) return;
    last = rows.at(-1);
  }
}

const SESSION_SOURCES = ["assistant_messages", "assistant_compactions", "assistant_sessions"] as const;
const CONTEXT_TABLES = ["cf_agents_context_blocks", "cf_agents_search_entries"] as const;

/** Adopts the reference's `tables` (found by {@link probe}) and records the report. */
export function* adoption(
  table: AdoptionStatements,
  tables: ReferenceTable[],
  options: AdoptOptions,
): Program<AdoptionReport> {
  const has = (t: ReferenceTable) => tables.includes(t);
  const report = emptyReport(tables);
  const run: AdoptionRun = { report, now: new Date().toISOString(), has };
  const sources = SESSION_SOURCES.filter(has);
  if (sources.length > 0) {
    yield* paged(table.sessionIds(sources), function* (rows) {
      for (const { id } of rows) {
        const sessionId = String(id);
        report.sessions++;
        const unusable = unusableSessionId(sessionId);
        if (unusable === undefined) yield* adoptSession(table, sessionId, run);
        else reject(report, { table: "assistant_messages", sessionId, id: "*", reason: unusable });
      }
    });
  }
  const rows = table.rows(run);
  for (const name of CONTEXT_TABLES.filter(has)) {
    yield* paged(table.contextRows(name), function* (page) {
      const accepted = page.flatMap(
        (row) => referenceContextRow(report, name, row.label, row.key, table.text(row.content)) ?? [],
      );
      yield rows.write(name, accepted);
    });
  }
  yield rows.close();
  yield table.record(adoptionRecord(report));
  if (options.dropSource) {
    assertDroppable(report);
    yield table.drop(tables);
    report.dropped = true;
  }
  return report;
}

function* adoptSession(table: AdoptionStatements, sessionId: string, run: AdoptionRun): Program<void> {
  const { report, now, has } = run;
  const [reference] = has("assistant_sessions") ? yield table.referenceSession(sessionId) : [];
  const info = reference ? referenceSessionInfo(reference, now) : null;
  if (typeof info === "string") {
    reject(report, { table: "assistant_sessions", sessionId, id: sessionId, reason: info });
  }
  const session = table.session(sessionId, typeof info === "string" ? null : info, run);
  yield session.open();
  const order = new MessageOrder(sessionId, report, now);
  if (has("assistant_messages")) {
    yield* paged(table.messages(sessionId), function* (rows) {
      yield session.write(rows.flatMap((row) => order.accept(referenceMessage(table, row))));
    });
    yield session.write(order.finish());
  }
  const overlays = new Map<string, string>();
  if (has("assistant_compactions")) {
    yield* paged(table.compactions(sessionId), function* (rows) {
      const items = rows.flatMap((row) => {
        const compaction = acceptCompaction(report, sessionId, referenceOverlay(table, row), now, overlays);
        return compaction ? [{ kind: "compaction" as const, compaction }] : [];
      });
      yield session.write(items);
    });
  }
  yield session.close(order, overlays);
}

function referenceMessage(table: AdoptionStatements, row: Row): ReferenceMessageRow {
  return {
    id: row.id,
    parentId: typeof row.parent_id === "string" ? row.parent_id : null,
    parentFound: Boolean(row.parent_found),
    parentBefore: Boolean(row.parent_before),
    role: row.role,
    content: table.text(row.content),
    createdAt: row.created_at,
  };
}

function referenceOverlay(table: AdoptionStatements, row: Row): Parameters<typeof referenceCompaction>[0] {
  const { id, from_message_id, to_message_id, created_at } = row;
  return { id, summary: table.text(row.summary), from_message_id, to_message_id, created_at };
}
