/**
 * Adopts what the reference (agents@0.22) wrote into the same Postgres database — its `assistant_*` and
 * `cf_agents_*` tables on the connection's `search_path` — through our own transfer import, then reads every
 * adopted row back through the transfer export and compares it. Runs inside the store's first `ready()`.
 */

import type { TransferItem } from "../../contract/transfer.js";
import { canBeStored } from "../../message/ids.js";
import {
  type AdoptionReport,
  type AdoptOptions,
  acceptCompaction,
  adoptionRecord,
  assertDroppable,
  assertReadBack,
  compactionPrint,
  compareReadBack,
  emptyReport,
  fingerprint,
  REFERENCE_SOURCE,
  REFERENCE_TABLES,
  type ReferenceTable,
  type referenceCompaction,
  reject,
  unusableSessionId,
  warnAdoption,
  warnIfNotClean,
} from "../../store/adopt/adopt.js";
import { MessageOrder } from "../../store/adopt/order.js";
import { compareRegistryRow, referenceSessionInfo } from "../../store/adopt/registry.js";
import { type Executor, type PostgresQueryable, sqlState } from "../connection/client.js";
import { PostgresSessionRegistry } from "../registry.js";
import type { Tables } from "../schema.js";
import { PostgresTransfer } from "../transfer/export.js";
import { adoptRows } from "./rows.js";

const PAGE = 500;

async function probe(
  executor: Executor,
  t: Tables,
): Promise<{ tables: ReferenceTable[]; recorded: boolean }> {
  const [row] = await executor.query<Record<string, boolean>>(
    `SELECT ${REFERENCE_TABLES.map((_name, i) => `to_regclass($${i + 2}) IS NOT NULL AS t${i}`).join(", ")},
       EXISTS (SELECT 1 FROM ${t.adoptions} WHERE source = $1) AS recorded`,
    [REFERENCE_SOURCE, ...REFERENCE_TABLES],
  );
  return {
    tables: REFERENCE_TABLES.filter((_, i) => row?.[`t${i}`] === true),
    recorded: row?.recorded === true,
  };
}

/**
 * True when one of the reference's tables is on the connection's `search_path`; reads only, so a caller can look
 * before opening a store (which creates agent-session's tables).
 */
export async function hasReferenceTables(db: PostgresQueryable): Promise<boolean> {
  const { rows } = await db.query(
    "SELECT EXISTS (SELECT 1 FROM unnest($1::text[]) AS n WHERE to_regclass(n) IS NOT NULL) AS found",
    [[...REFERENCE_TABLES]],
  );
  return (rows[0] as { found?: unknown } | undefined)?.found === true;
}

/** On the store's first use: adopts the reference's tables once (recorded); null when there was nothing to do. */
export async function adoptOnOpen(executor: Executor, t: Tables): Promise<AdoptionReport | null> {
  const { tables, recorded } = await probe(executor, t);
  if (tables.length === 0 || recorded) return null;
  let report: AdoptionReport;
  try {
    report = await adopt(executor, t, tables, {});
  } catch (error) {
    // A role that may not read the reference's tables (42501) still gets a working store; the owner can adopt.
    if (sqlState(error) !== "42501") throw error;
    warnAdoption(
      `the reference's tables (${tables.join(", ")}) were found but this role may not read them; nothing was adopted (run agent-session adopt as a role that can)`,
    );
    return null;
  }
  warnIfNotClean(report, "<url>");
  return report;
}

/** Adopts the reference's tables now (idempotently), optionally dropping them; null when there are none. */
export async function adoptReference(
  executor: Executor,
  t: Tables,
  options: AdoptOptions = {},
): Promise<AdoptionReport | null> {
  const { tables } = await probe(executor, t);
  return tables.length === 0 ? null : adopt(executor, t, tables, options);
}

async function adopt(
  executor: Executor,
  t: Tables,
  tables: ReferenceTable[],
  options: AdoptOptions,
): Promise<AdoptionReport> {
  const has = (name: ReferenceTable) => tables.includes(name);
  const ready = async () => executor;
  const registry = new PostgresSessionRegistry(ready, t);
  const transfer = new PostgresTransfer(ready, t, registry);
  const report = emptyReport(tables);
  const now = new Date().toISOString();
  for await (const sessionId of sessionIds(executor, has)) {
    report.sessions++;
    const unusable = unusableSessionId(sessionId);
    if (unusable !== undefined) {
      reject(report, { table: "assistant_messages", sessionId, id: "*", reason: unusable });
      continue;
    }
    await adoptSession(executor, { transfer, registry }, sessionId, has, report, now);
  }
  await adoptRows(executor, transfer, has, report);
  await executor.query(
    `INSERT INTO ${t.adoptions} (source, adopted_at, report) VALUES ($1, $2, $3)
     ON CONFLICT (source) DO UPDATE SET adopted_at = EXCLUDED.adopted_at, report = EXCLUDED.report`,
    adoptionRecord(report),
  );
  if (options.dropSource) await dropSource(executor, tables, report);
  return report;
}

async function* sessionIds(executor: Executor, has: (t: ReferenceTable) => boolean): AsyncGenerator<string> {
  const sources = [
    has("assistant_messages") ? "SELECT session_id AS id FROM assistant_messages" : "",
    has("assistant_compactions") ? "SELECT session_id FROM assistant_compactions" : "",
    has("assistant_sessions") ? "SELECT id FROM assistant_sessions" : "",
  ].filter(Boolean);
  if (sources.length === 0) return;
  for (let after: string | null = null; ; ) {
    const rows: { id: string }[] = await executor.query<{ id: string }>(
      `SELECT id FROM (${sources.join(" UNION ")}) s WHERE id IS NOT NULL
         AND ($1::text IS NULL OR id COLLATE "C" > $1::text) ORDER BY id COLLATE "C" LIMIT $2`,
      [after, PAGE],
    );
    for (const row of rows) yield row.id;
    if (rows.length < PAGE) return;
    after = rows.at(-1)!.id;
  }
}

interface MessageRow {
  id: string | null;
  parent_id: string | null;
  role: string | null;
  content: string;
  created_at: Date | null;
  k: string;
  parent_found: boolean;
  parent_before: boolean;
}

// Storage order is creation time (each reference write is its own statement), ties by id; a parent that is
// not strictly earlier is waited for.
const KEY = `COALESCE(m.created_at, '-infinity'::timestamptz)`;
const PARENT_KEY = `COALESCE(p.created_at, '-infinity'::timestamptz)`;

/** One session's messages, in storage order, as transfer items whose parents come first. */
async function* sessionItems(
  executor: Executor,
  sessionId: string,
  order: MessageOrder,
): AsyncGenerator<TransferItem> {
  for (let after: { k: string; id: string } | null = null; ; ) {
    const rows: MessageRow[] = await executor.query<MessageRow>(
      `SELECT m.id, m.parent_id, m.role, m.content, m.created_at, ${KEY}::text AS k, p.id IS NOT NULL AS parent_found,
         p.id IS NOT NULL AND (${PARENT_KEY}, p.id) < (${KEY}, m.id) AS parent_before
       FROM assistant_messages m LEFT JOIN assistant_messages p ON p.session_id = m.session_id AND p.id = m.parent_id
       WHERE m.session_id = $1 AND ($2::text IS NULL OR (${KEY}, m.id) > ($2::timestamptz, $3::text))
       ORDER BY ${KEY}, m.id LIMIT $4`,
      [sessionId, after?.k ?? null, after?.id ?? null, PAGE],
    );
    for (const row of rows) {
      const ready = order.accept({
        id: row.id,
        parentId: row.parent_id,
        parentFound: row.parent_found,
        parentBefore: row.parent_before,
        role: row.role,
        content: row.content,
        createdAt: row.created_at,
      });
      yield* ready;
    }
    if (rows.length < PAGE) break;
    const last = rows.at(-1)!;
    after = { k: last.k, id: last.id ?? "" };
  }
  yield* order.finish();
}

async function adoptSession(
  executor: Executor,
  { transfer, registry }: { transfer: PostgresTransfer; registry: PostgresSessionRegistry },
  sessionId: string,
  has: (t: ReferenceTable) => boolean,
  report: AdoptionReport,
  now: string,
): Promise<void> {
  const [info] = has("assistant_sessions")
    ? await executor.query<Record<string, unknown>>("SELECT * FROM assistant_sessions WHERE id = $1", [
        sessionId,
      ])
    : [];
  const checked = info ? referenceSessionInfo(info, now) : null;
  if (typeof checked === "string") {
    reject(report, { table: "assistant_sessions", sessionId, id: sessionId, reason: checked });
  }
  const row = typeof checked === "string" ? null : checked;
  const [leaf] = has("assistant_messages")
    ? await executor.query<{ id: string }>(
        `SELECT m.id FROM assistant_messages m
         WHERE m.session_id = $1 AND NOT EXISTS (
           SELECT 1 FROM assistant_messages c WHERE c.session_id = $1 AND c.parent_id = m.id)
         ORDER BY m.created_at DESC NULLS LAST, m.id DESC LIMIT 1`,
        [sessionId],
      )
    : [];
  const overlays = new Map<string, string>();
  const order = new MessageOrder(sessionId, report, now);
  async function* items(): AsyncGenerator<TransferItem> {
    yield {
      kind: "session",
      session: {
        id: sessionId,
        info: row,
        // A leaf we cannot store (its row is reported) leaves the choice to the import: the newest childless row.
        leafId: leaf && canBeStored(leaf.id) ? leaf.id : null,
      },
    };
    if (has("assistant_messages")) yield* sessionItems(executor, sessionId, order);
    if (!has("assistant_compactions")) return;
    const rows = await executor.query<Record<string, unknown>>(
      `SELECT id, summary, from_message_id, to_message_id, created_at FROM assistant_compactions
       WHERE session_id = $1 ORDER BY created_at, id`,
      [sessionId],
    );
    for (const row of rows) {
      const reference = row as Parameters<typeof referenceCompaction>[0];
      const compaction = acceptCompaction(report, sessionId, reference, now, overlays);
      if (compaction) yield { kind: "compaction", compaction };
    }
  }
  const result = await transfer.importSession(items());
  if (row) {
    report.registry[result.registered ? "inserted" : "skipped"]++;
    compareRegistryRow(report, row, await registry.get(sessionId));
  }
  for (const kind of ["messages", "compactions"] as const) {
    report[kind].inserted += result[kind].inserted;
    report[kind].skipped += result[kind].skipped;
  }
  await verifySession(transfer, sessionId, order, overlays, report);
}

/** Reads the session back through the transfer export and compares every adopted message and overlay. */
async function verifySession(
  transfer: PostgresTransfer,
  sessionId: string,
  { written: messages, inline }: Pick<MessageOrder, "written" | "inline">,
  overlays: Map<string, string>,
  report: AdoptionReport,
): Promise<void> {
  let seen = 0;
  for await (const item of transfer.exportSession(sessionId)) {
    if (item.kind === "session" || item.kind === "attachment") continue;
    const [table, id, expected, actual] =
      item.kind === "message"
        ? [
            "assistant_messages",
            item.message.id,
            messages.get(item.message.id),
            fingerprint(item.message.parentId, item.message.createdAt, item.message.content),
          ]
        : [
            "assistant_compactions",
            item.compaction.id,
            overlays.get(item.compaction.id),
            compactionPrint(item.compaction),
          ];
    if (expected === undefined) continue;
    seen++;
    const alternate = item.kind === "message" ? inline.get(id) : undefined;
    compareReadBack(report, expected, actual, `${table}:${sessionId}:${id}`, alternate);
  }
  assertReadBack(messages.size + overlays.size - seen, `row(s) of session "${sessionId}"`);
}

async function dropSource(
  executor: Executor,
  tables: ReferenceTable[],
  report: AdoptionReport,
): Promise<void> {
  assertDroppable(report);
  await executor.transaction(async (query) => {
    for (const table of tables) await query(`DROP TABLE IF EXISTS ${table}`);
  });
  report.dropped = true;
}
