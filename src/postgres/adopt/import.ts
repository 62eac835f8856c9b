/**
 * Postgres' adoption routines (its table: sql/adopt/postgres.ts): a session's rows go through the transfer import's
 * own writer in its batches (each one transaction holding the head lock, Citus-routed), the context rows through
 * its row import in its runs; everything adopted is read back through the transfer export and compared.
 */

import type { SessionInfo } from "../../contract/registry.js";
import type { ImportCounts, SessionImportResult, TransferRow } from "../../contract/transfer.js";
import { canBeStored } from "../../message/ids.js";
import type {
  AdoptedWrite,
  AdoptionRun,
  AdoptionWrites,
  RowsAdoption,
  SessionAdoption,
} from "../../sql/adopt/steps.js";
import type { Executor } from "../../sql/engines/postgres/client.js";
import type { Tables } from "../../sql/engines/postgres/tables.js";
import { routine } from "../../sql/program.js";
import { sessionImport } from "../../sql/transfer/postgres-import.js";
import type { AdoptionReport } from "../../store/adopt/adopt.js";
import { assertReadBack, compactionPrint, compareReadBack, fingerprint } from "../../store/adopt/adopt.js";
import { contextRowName } from "../../store/adopt/context.js";
import type { MessageOrder } from "../../store/adopt/order.js";
import { compareRegistryRow } from "../../store/adopt/registry.js";
import { importChanged } from "../../store/feed/publish.js";
import { AttachmentImport } from "../../store/transfer/attachments.js";
import {
  BATCH,
  type RowImportWriter,
  RUN_CHARS,
  type SessionImportWriter,
} from "../../store/transfer/base.js";
import { assertTransferHeader, assertTransferRow } from "../../store/transfer/schema.js";
import { assertTransferItem } from "../../store/transfer/validate.js";
import { PostgresSessionRegistry } from "../registry.js";
import { PostgresTransfer } from "../transfer/export.js";
import { POSTGRES_IMPORT } from "../transfer/import.js";
import { rowsImport } from "../transfer/rows.js";

/** What the routines write and read through. */
export interface Adopter {
  executor: Executor;
  t: Tables;
  transfer: PostgresTransfer;
  registry: PostgresSessionRegistry;
}

// The reference's own choice of the latest leaf: the newest childless row.
const LEAF = `SELECT m.id FROM assistant_messages m
         WHERE m.session_id = $1 AND NOT EXISTS (
           SELECT 1 FROM assistant_messages c WHERE c.session_id = $1 AND c.parent_id = m.id)
         ORDER BY m.created_at DESC NULLS LAST, m.id DESC LIMIT 1`;

/**
 * One session's import, as `StoreTransfer.importSession` runs it (header, registry row, batches of BATCH items,
 * the last step when it inserted), fed by the program's pages; then the registry row and every row read back.
 */
export function sessionAdoption(
  { executor, t, transfer, registry }: Adopter,
  sessionId: string,
  info: SessionInfo | null,
  { report, has }: AdoptionRun,
): SessionAdoption {
  let writer: SessionImportWriter;
  const result: SessionImportResult = {
    sessionId,
    registered: false,
    messages: { inserted: 0, skipped: 0 },
    compactions: { inserted: 0, skipped: 0 },
  };
  const attachments = new AttachmentImport();
  const batch: AdoptedWrite[] = [];
  let wrote = false;
  const write = async (items: AdoptedWrite[]) => {
    await writer.write(items, result, attachments);
    wrote = true;
  };
  return {
    open: () =>
      routine(async () => {
        const [leaf] = has("assistant_messages")
          ? await executor.query<{ id: string }>(LEAF, [sessionId])
          : [];
        // A leaf we cannot store (its row is reported) leaves the choice to the import: the newest childless row.
        const header = { id: sessionId, info, leafId: leaf && canBeStored(leaf.id) ? leaf.id : null };
        assertTransferHeader(header);
        writer = await sessionImport(async () => executor, t, POSTGRES_IMPORT, header, undefined);
        if (info) result.registered = await writer.register({ ...info, id: sessionId });
      }),
    write: (items) =>
      routine(async () => {
        for (const item of items) {
          assertTransferItem(item);
          batch.push(item);
          if (batch.length >= BATCH) await write(batch.splice(0));
        }
      }),
    close: (order, overlays) =>
      routine(async () => {
        if (batch.length > 0) await write(batch.splice(0));
        if (wrote && importChanged(result)) await writer.finish(result);
        if (info) {
          report.registry[result.registered ? "inserted" : "skipped"]++;
          compareRegistryRow(report, info, await registry.get(sessionId));
        }
        for (const kind of ["messages", "compactions"] as const) {
          report[kind].inserted += result[kind].inserted;
          report[kind].skipped += result[kind].skipped;
        }
        await verifySession(transfer, sessionId, order, overlays, report);
      }),
  };
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
    if (item.kind === "session" || item.kind === "attachment" || item.kind === "checkpoint") continue;
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

const rowKey = (row: TransferRow) =>
  row.kind === "block" ? `block\u0000${row.key}` : `entry\u0000${row.label}\u0000${row.key}`;

/**
 * Blocks, then entries, as `StoreTransfer.importRows` writes them (runs of one kind, cut at the writer's run or
 * RUN_CHARS of text, each table counted on its own); then every adopted one is read back and compared.
 */
export function rowsAdoption({ executor, t, transfer }: Adopter, { report }: AdoptionRun): RowsAdoption {
  const written = new Map<string, string>();
  const run: TransferRow[] = [];
  let chars = 0;
  // The table whose rows are being written, with its writer and counts.
  let current: { table: string; writer: RowImportWriter; counts: ImportCounts } | undefined;
  const flush = async () => {
    if (run.length === 0 || !current) return;
    const { writer, counts } = current;
    const rows = run.splice(0);
    const inserted = await writer.write(rows);
    counts.inserted += inserted;
    counts.skipped += rows.length - inserted;
    chars = 0;
  };
  return {
    write: (table, rows) =>
      routine(async () => {
        if (current?.table !== table) {
          await flush();
          const counts = table === "cf_agents_context_blocks" ? report.blocks : report.entries;
          current = { table, writer: await rowsImport(async () => executor, t), counts };
        }
        const { writer } = current;
        for (const row of rows) {
          written.set(rowKey(row), fingerprint(row.content));
          assertTransferRow(row);
          run.push(row);
          chars += row.content.length + row.key.length;
          if (run.length >= writer.run || chars >= RUN_CHARS) await flush();
        }
      }),
    close: () =>
      routine(async () => {
        await flush();
        if (written.size === 0) return;
        let seen = 0;
        for await (const row of transfer.exportRows()) {
          const expected = written.get(rowKey(row));
          if (expected === undefined) continue;
          seen++;
          compareReadBack(report, expected, fingerprint(row.content), contextRowName(row));
        }
        assertReadBack(written.size - seen, "block or entry row(s)");
      }),
  };
}

/** An adoption's writes over `executor` (sql/adopt/postgres.ts runs them): through our own transfer import. */
export function postgresAdoptionWrites(executor: Executor, t: Tables): AdoptionWrites {
  const ready = async () => executor;
  const registry = new PostgresSessionRegistry(ready, t);
  const transfer = new PostgresTransfer(ready, t, registry);
  const adopter = { executor, t, transfer, registry };
  return {
    session: (sessionId, info, run) => sessionAdoption(adopter, sessionId, info, run),
    rows: (run) => rowsAdoption(adopter, run),
  };
}
