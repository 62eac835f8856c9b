/**
 * Adoption of data the reference (agents@0.22 `experimental/memory/session`) wrote, the backend-neutral half:
 * which tables count, how a reference row becomes a transfer row, which rows cannot be stored and why, the
 * fingerprints and read-back checks that verify every adopted row afterwards, and the report (messages go in
 * parents first through order.ts). The steps are one program, sql/adopt/steps.ts, over a statement table per
 * engine (`src/sql/adopt/sqlite.ts`, `src/sql/adopt/postgres.ts`).
 */

import type { StoredCompaction } from "../../contract/message.js";
import type { ImportCounts } from "../../contract/transfer.js";
import { SessionError, StorageError } from "../../errors.js";
import { assertSessionId } from "../../message/ids.js";
import { COMPACTION_PREFIX } from "../../message/overlay.js";
import { emitWarning } from "../../runtime/warn.js";
import { fnv1a } from "../entry-key.js";
import { assertTransferItem } from "../transfer/validate.js";

/** The name an adoption is recorded under (one record per store: adoption runs once, then never on open). */
export const REFERENCE_SOURCE = "agents@0.22";

/** The reference's tables that hold data worth adopting (its FTS tables are derived and rebuilt by us). */
export const REFERENCE_TABLES = [
  "assistant_messages",
  "assistant_compactions",
  "assistant_sessions",
  "cf_agents_context_blocks",
  "cf_agents_search_entries",
] as const;

/** One of {@link REFERENCE_TABLES}. */
export type ReferenceTable = (typeof REFERENCE_TABLES)[number];

/** A row that could not be adopted (it stays in the reference's table) and why. */
export interface RejectedRow {
  table: ReferenceTable;
  sessionId: string;
  id: string;
  reason: string;
}

/**
 * What an adoption did, row by row; `verified` counts rows read back identical after the import (registry rows:
 * see {@link compareRegistryRow}).
 */
export interface AdoptionReport {
  source: typeof REFERENCE_SOURCE;
  /** The reference's tables that were found. */
  tables: ReferenceTable[];
  sessions: number;
  messages: ImportCounts;
  compactions: ImportCounts;
  registry: ImportCounts;
  blocks: ImportCounts;
  entries: ImportCounts;
  /** Adopted rows read back identical from our tables. */
  verified: number;
  /** Rows already present in our tables with other content (ours are kept): `table:session:id`, at most 100. */
  differing: string[];
  differingCount: number;
  /** Rows that cannot be stored (no id, a reserved `compaction_` id, …), at most 100. */
  rejected: RejectedRow[];
  rejectedCount: number;
  /** True when the reference's tables were dropped after a clean adoption (only on request). */
  dropped: boolean;
  /** ISO time the adoption finished. */
  adoptedAt: string;
}

/** Options of an explicit adoption (`store.adoptReference()`, `agent-session adopt`). */
export interface AdoptOptions {
  /** Drop the reference's tables once every row was adopted and verified (default false: they stay untouched). */
  dropSource?: boolean;
}

const LIST_CAP = 100;

/** An empty report for the tables found. */
export function emptyReport(tables: ReferenceTable[]): AdoptionReport {
  const counts = (): ImportCounts => ({ inserted: 0, skipped: 0 });
  return {
    source: REFERENCE_SOURCE,
    tables,
    sessions: 0,
    messages: counts(),
    compactions: counts(),
    registry: counts(),
    blocks: counts(),
    entries: counts(),
    verified: 0,
    differing: [],
    differingCount: 0,
    rejected: [],
    rejectedCount: 0,
    dropped: false,
    adoptedAt: "",
  };
}

// Names in the report are cut: a rejected id may be as long as a value holds, and the report is one value too.
const clip = (name: string) => (name.length > 256 ? `${name.slice(0, 256)}…` : name);

/** Records a row that cannot be adopted (the list is capped, the count is not; long ids are cut). */
export function reject(report: AdoptionReport, row: RejectedRow): void {
  report.rejectedCount++;
  if (report.rejected.length < LIST_CAP) {
    report.rejected.push({ ...row, sessionId: clip(row.sessionId), id: clip(row.id) });
  }
}

/** Records a row whose stored copy differs from the reference's (ours was there first and is kept). */
export function differs(report: AdoptionReport, what: string): void {
  report.differingCount++;
  if (report.differing.length < LIST_CAP) report.differing.push(what);
}

/**
 * A reference timestamp as ISO-8601: SQLite's `CURRENT_TIMESTAMP` text (`YYYY-MM-DD HH:MM:SS`, UTC), a Date from
 * Postgres, or text Postgres rendered. A missing or unreadable time becomes `fallback` (the adoption's time).
 */
export function referenceTime(value: unknown, fallback: string): string {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? fallback : value.toISOString();
  if (typeof value !== "string" || value.length === 0) return fallback;
  const sqlite = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$/.test(value)
    ? `${value.replace(" ", "T")}Z`
    : value;
  const time = new Date(sqlite);
  return Number.isNaN(time.getTime()) ? fallback : time.toISOString();
}

/** Why an id cannot be stored, or undefined when it can (ids with NUL or `compaction_` are refused everywhere). */
export function unusableId(id: unknown): string | undefined {
  if (typeof id !== "string" || id.length === 0) return "no id";
  if (id.includes("\u0000")) return "the id contains U+0000";
  if (id.startsWith(COMPACTION_PREFIX)) return `the id starts with the reserved "${COMPACTION_PREFIX}"`;
  return undefined;
}

/**
 * Why a reference row cannot be stored: the message of the `SessionError` our own import check raises (so adoption
 * refuses exactly what an import would, and reports it instead of failing), or undefined when the check passes.
 */
export function refusal(check: () => void): string | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    if (error instanceof SessionError) return error.message;
    throw error;
  }
}

/** Why a reference session id cannot name one of our sessions (U+0000, a lone surrogate, over 1,024 bytes). */
export function unusableSessionId(id: string): string | undefined {
  return refusal(() => assertSessionId(id));
}

/** A short fingerprint of a row's content, to compare what was written with what is read back. */
export function fingerprint(...parts: (string | null)[]): string {
  const text = parts.map((p) => (p === null ? "\u0001" : p)).join("\u0000");
  return `${text.length}:${fnv1a(text)}`;
}

/** A reference overlay row as a stored compaction, or a rejection reason. */
export function referenceCompaction(
  row: {
    id: unknown;
    summary: unknown;
    from_message_id: unknown;
    to_message_id: unknown;
    created_at: unknown;
  },
  now: string,
): StoredCompaction | string {
  if (typeof row.id !== "string" || row.id.length === 0) return "no id";
  if (typeof row.from_message_id !== "string" || typeof row.to_message_id !== "string") return "no endpoints";
  return {
    id: row.id,
    summary: typeof row.summary === "string" ? row.summary : String(row.summary ?? ""),
    fromMessageId: row.from_message_id,
    toMessageId: row.to_message_id,
    createdAt: referenceTime(row.created_at, now),
  };
}

/** The fingerprint of a stored compaction, as written and as read back. */
export function compactionPrint(c: StoredCompaction): string {
  return fingerprint(c.summary, c.fromMessageId, c.toMessageId, c.createdAt);
}

/**
 * A reference overlay row accepted for import (its fingerprint kept in `written` for the read-back), or undefined
 * once recorded as rejected.
 */
export function acceptCompaction(
  report: AdoptionReport,
  sessionId: string,
  row: Parameters<typeof referenceCompaction>[0],
  now: string,
  written: Map<string, string>,
): StoredCompaction | undefined {
  const compaction = referenceCompaction(row, now);
  // An overlay our import would refuse (an empty or over-long id or endpoint) stays behind, reported.
  const reason =
    typeof compaction === "string"
      ? compaction
      : refusal(() => assertTransferItem({ kind: "compaction", compaction }));
  if (typeof compaction === "string" || reason !== undefined) {
    reject(report, { table: "assistant_compactions", sessionId, id: String(row.id), reason: reason ?? "" });
    return undefined;
  }
  written.set(compaction.id, compactionPrint(compaction));
  return compaction;
}

/**
 * Counts a row read back as verified when it matches what was written (or its `alternate` form, see
 * MessageOrder.inline), else as differing under `name`.
 */
export function compareReadBack(
  report: AdoptionReport,
  expected: string,
  actual: string,
  name: string,
  alternate?: string,
): void {
  if (expected === actual || alternate === actual) report.verified++;
  else differs(report, name);
}

/** Fails the adoption (`STORAGE`) when `missing` written rows (`what`, e.g. `message(s) of session "s"`) are not found. */
export function assertReadBack(missing: number, what: string, first?: string): void {
  if (missing === 0) return;
  const example = first === undefined ? "" : ` (first: "${first}")`;
  throw new StorageError(
    `Adoption failed: ${missing} ${what} were written but cannot be read back${example}`,
  );
}

/** Stamps the report as finished; the values of its `agent_adoptions` row (source, adopted_at, report). */
export function adoptionRecord(report: AdoptionReport): [string, string, string] {
  report.adoptedAt = new Date().toISOString();
  return [REFERENCE_SOURCE, report.adoptedAt, JSON.stringify(report)];
}

/**
 * Throws `CONFLICT` unless the adoption was clean (every row adopted and identical), the condition for dropping
 * the reference's tables.
 */
export function assertDroppable(report: AdoptionReport): void {
  if (report.rejectedCount > 0 || report.differingCount > 0) {
    throw new SessionError(
      "CONFLICT",
      `The reference's tables were adopted but not dropped: ${report.rejectedCount} row(s) could not be adopted and ${report.differingCount} differ from what was already stored (${describeAdoption(report)})`,
    );
  }
}

/** Reports what adoption on open left undone (it never fails the open) as an `AgentSessionAdoptWarning`. */
export function warnAdoption(message: string): void {
  emitWarning(message, "AgentSessionAdoptWarning");
}

/** After an automatic adoption: one warning when rows were left behind or differ (never silent). */
export function warnIfNotClean(report: AdoptionReport, db: string): void {
  if (report.rejectedCount > 0 || report.differingCount > 0) {
    warnAdoption(`${describeAdoption(report)} (details: agent-session adopt --db ${db})`);
  }
}

/** One line for logs and the CLI: what was adopted. */
export function describeAdoption(report: AdoptionReport): string {
  const n = (c: ImportCounts) => c.inserted + c.skipped;
  return (
    `adopted the reference's data (${report.tables.join(", ")}): ${report.sessions} session(s), ` +
    `${n(report.messages)} message(s), ${n(report.compactions)} overlay(s), ${n(report.registry)} registry row(s), ` +
    `${n(report.blocks)} block(s), ${n(report.entries)} entr(y/ies); ${report.verified} row(s) verified` +
    (report.differingCount ? `, ${report.differingCount} kept as already stored with other content` : "") +
    (report.rejectedCount ? `, ${report.rejectedCount} row(s) that cannot be stored left in place` : "")
  );
}
