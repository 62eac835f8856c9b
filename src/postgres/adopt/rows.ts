/** Adoption of the reference's context blocks and search entries on Postgres, and its read-back (see adopt.ts). */

import type { TransferRow } from "../../contract/transfer.js";
import {
  type AdoptionReport,
  assertReadBack,
  compareReadBack,
  fingerprint,
  type ReferenceTable,
} from "../../store/adopt/adopt.js";
import {
  contextRowName,
  type ReferenceContextTable,
  referenceContextRow,
} from "../../store/adopt/context.js";
import type { Executor } from "../connection/client.js";
import type { PostgresTransfer } from "../transfer/export.js";

const PAGE = 500;

async function* referenceRows(
  executor: Executor,
  table: ReferenceContextTable,
  report: AdoptionReport,
  written: Map<string, string>,
): AsyncGenerator<TransferRow> {
  const blocks = table === "cf_agents_context_blocks";
  const key = blocks ? "''" : "key";
  for (let after: [string, string] | null = null; ; ) {
    const rows: { label: string; key: string; content: string }[] = await executor.query(
      `SELECT label, ${key} AS key, content FROM ${table}
       WHERE $1::text IS NULL OR (label COLLATE "C", ${key} COLLATE "C") > ($1::text, $2::text)
       ORDER BY label COLLATE "C", ${key} COLLATE "C" LIMIT $3`,
      [after?.[0] ?? null, after?.[1] ?? null, PAGE],
    );
    for (const row of rows) {
      const transferRow = referenceContextRow(
        report,
        table,
        row.label,
        blocks ? undefined : row.key,
        row.content,
      );
      if (!transferRow) continue;
      written.set(rowKey(transferRow), fingerprint(row.content));
      yield transferRow;
    }
    if (rows.length < PAGE) return;
    after = [rows.at(-1)!.label, rows.at(-1)!.key];
  }
}

const rowKey = (row: TransferRow) =>
  row.kind === "block" ? `block\u0000${row.key}` : `entry\u0000${row.label}\u0000${row.key}`;

/** Imports blocks, then entries (each with its own counts), then reads every adopted one back and compares. */
export async function adoptRows(
  executor: Executor,
  transfer: PostgresTransfer,
  has: (t: ReferenceTable) => boolean,
  report: AdoptionReport,
): Promise<void> {
  const written = new Map<string, string>();
  if (has("cf_agents_context_blocks")) {
    report.blocks = await transfer.importRows(
      referenceRows(executor, "cf_agents_context_blocks", report, written),
    );
  }
  if (has("cf_agents_search_entries")) {
    report.entries = await transfer.importRows(
      referenceRows(executor, "cf_agents_search_entries", report, written),
    );
  }
  if (written.size === 0) return;
  let seen = 0;
  for await (const row of transfer.exportRows()) {
    const expected = written.get(rowKey(row));
    if (expected === undefined) continue;
    seen++;
    compareReadBack(report, expected, fingerprint(row.content), contextRowName(row));
  }
  assertReadBack(written.size - seen, "block or entry row(s)");
}
