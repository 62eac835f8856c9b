/**
 * Adoption of the reference's context tables (see adopt.ts): a block or search entry row becomes a transfer row
 * when our import accepts its names, else it is reported and left in place.
 */

import type { TransferRow } from "../../contract/transfer.js";
import { assertTransferRow } from "../transfer/schema.js";
import { type AdoptionReport, refusal, reject } from "./adopt.js";

/** The reference's context tables: one row per block, one per searchable entry. */
export type ReferenceContextTable = "cf_agents_context_blocks" | "cf_agents_search_entries";

/**
 * A reference block (`key` unused) or search entry row as a transfer row, or undefined once recorded as rejected
 * (a block needs a label, an entry a label and a key, each one our import accepts).
 */
export function referenceContextRow(
  report: AdoptionReport,
  table: ReferenceContextTable,
  label: unknown,
  key: unknown,
  content: string,
): TransferRow | undefined {
  const block = table === "cf_agents_context_blocks";
  if (typeof label !== "string" || label === "" || (!block && typeof key !== "string")) {
    const id = block ? String(label) : `${String(label)}/${String(key)}`;
    reject(report, { table, sessionId: "", id, reason: block ? "no label" : "no label or key" });
    return undefined;
  }
  const row: TransferRow = block
    ? { kind: "block", key: label, content }
    : { kind: "entry", label, key: key as string, content };
  // A key our import would refuse (U+0000, an empty entry key, over the length limit) stays behind, reported.
  const reason = refusal(() => assertTransferRow(row));
  if (reason === undefined) return row;
  reject(report, { table, sessionId: "", id: block ? label : `${label}/${String(key)}`, reason });
  return undefined;
}

/** How a differing block or entry is named in the report: `table:label` or `table:label/key`. */
export function contextRowName(row: TransferRow): string {
  return row.kind === "block"
    ? `cf_agents_context_blocks:${row.key}`
    : `cf_agents_search_entries:${row.label}/${row.key}`;
}
