/**
 * Erasure: what a registry's `erase` removes of one session and the receipt it answers with, and the condition a
 * retention sweep erases under (re-checked inside the erasing transaction, so a session written to since it was
 * selected, or pinned meanwhile, stays).
 */

import type { ErasureCondition, ErasureCounts, ErasureReceipt } from "../contract/registry.js";

export type { ErasureCondition, ErasureCounts, ErasureReceipt } from "../contract/registry.js";

/** Counts of nothing. */
export function noCounts(): ErasureCounts {
  return {
    sessions: 0,
    messages: 0,
    compactions: 0,
    vectors: 0,
    blocks: 0,
    entries: 0,
    attachments: 0,
    changes: 0,
    facts: 0,
  };
}

/** Adds `more` into `into` (field by field). */
export function addCounts(into: ErasureCounts, more: ErasureCounts): void {
  // The count fields only: a receipt adds its `sessionIds` on top.
  for (const key of Object.keys(noCounts()) as (keyof ErasureCounts)[]) into[key] += more[key];
}

/** A receipt of no session. */
export function emptyReceipt(): ErasureReceipt {
  return { sessionIds: [], ...noCounts() };
}

/** Counts read from SQL (bigints on node:sqlite, strings on pg) as numbers. */
export function countsOf(row: Partial<Record<keyof ErasureCounts, unknown>> | undefined): ErasureCounts {
  const counts = noCounts();
  for (const key of Object.keys(counts) as (keyof ErasureCounts)[]) counts[key] = Number(row?.[key] ?? 0);
  return counts;
}

/**
 * True when a registry row meets `condition` (no row: only an erasure with no condition on the row proceeds). Read
 * in the erasure's own transaction, so an owner or source it names cannot change between the check and the erase.
 */
export function meetsCondition(
  info: { updated_at: string; pinned?: true; owner?: string; source?: string | null } | undefined,
  condition: ErasureCondition,
): boolean {
  const { inactiveBefore, unpinned, owner, source } = condition;
  if (inactiveBefore === undefined && !unpinned && owner === undefined && source === undefined) return true;
  if (!info) return false;
  if (owner !== undefined && info.owner !== owner) return false;
  if (source !== undefined && info.source !== source) return false;
  if (unpinned && info.pinned) return false;
  return inactiveBefore === undefined || info.updated_at < inactiveBefore;
}
