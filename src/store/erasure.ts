/**
 * Erasure: what a registry's `erase` removes of one session and the receipt it answers with, and the condition a
 * retention sweep erases under (re-checked inside the erasing transaction, so a session written to since it was
 * selected, or pinned meanwhile, stays).
 */

/** How many rows of each kind an erasure removed. */
export interface ErasureCounts {
  /** Registry rows (0 for a session that had stored data but no registry row). */
  sessions: number;
  /** Messages, on every branch. */
  messages: number;
  /** Overlays (compaction summaries). */
  compactions: number;
  /** Vector-channel rows of those messages (0 on a store without the vector channel). */
  vectors: number;
  /** Context blocks of the session's keys (auto-wired blocks, the cached prompt, an agent session's header). */
  blocks: number;
  /** Search entries filed under the session's block keys. */
  entries: number;
  /** Offloaded payloads no other message links any more. */
  attachments: number;
  /** Change-log rows of the session (the `erased` row the erasure logs itself is not counted). */
  changes: number;
}

/** The receipt of an erasure: the sessions erased and the counts summed over them. */
export interface ErasureReceipt extends ErasureCounts {
  /** The ids of the erased sessions. */
  sessionIds: string[];
}

/** A condition an erasure re-checks in its own transaction (a retention sweep's); unmet: nothing is erased. */
export interface ErasureCondition {
  /** Erase only when the session's last activity (`updated_at`) is before this ISO time. */
  inactiveBefore?: string;
  /** Erase only when the session is not pinned. */
  unpinned?: boolean;
  /**
   * Postgres: skip a session whose registry row another transaction holds (`FOR UPDATE SKIP LOCKED`) rather than
   * wait for it: a concurrent sweeper is erasing it.
   */
  skipLocked?: boolean;
}

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

/** True when a registry row meets `condition` (no row: only an unconditional erasure proceeds). */
export function meetsCondition(
  info: { updated_at: string; pinned?: true } | undefined,
  condition: ErasureCondition,
): boolean {
  if (condition.inactiveBefore === undefined && !condition.unpinned) return true;
  if (!info) return false;
  if (condition.unpinned && info.pinned) return false;
  return condition.inactiveBefore === undefined || info.updated_at < condition.inactiveBefore;
}
