/**
 * SQLite's usage counters of `agent_sessions` as the registry's `addUsage` and the agent step add to them: the SET
 * assignments, and the WHERE terms that refuse an addition which would carry a total out of range (the rule and
 * its ranges: src/store/usage-totals.ts). Checked in the UPDATE itself, so a refusal writes nothing.
 */

import type { SessionUsage } from "../../contract/registry.js";
import { StorageError } from "../../errors.js";
import { USAGE_COUNTERS, type UsageTotals, usageRefusal } from "../../store/usage-totals.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";

/** Adds the five `?` deltas (usageDeltas order) to the counters. */
export const USAGE_SET = USAGE_COUNTERS.map((counter) => `${counter} = ${counter} + ?`).join(", ");

/** True when every counter lies in its range; binds the ten numbers of `usageBounds`. */
export const USAGE_FITS = USAGE_COUNTERS.map((counter) => `${counter} BETWEEN ? AND ?`).join(" AND ");

/** Whose row a step may write: its source and owner, null for any. */
export interface RowGuard {
  source: string | null;
  owner: string | null;
}

/** The WHERE term of {@link RowGuard} on `agent_sessions`; binds {@link stepGuardParams}. */
export const STEP_GUARD = "(? IS NULL OR source = ?) AND (? IS NULL OR owner = ?)";

/** The four parameters of {@link STEP_GUARD}. */
export function stepGuardParams({ source, owner }: RowGuard): (string | null)[] {
  return [source, source, owner, owner];
}

const ANY: RowGuard = { source: null, owner: null };

/**
 * After an UPDATE with {@link USAGE_FITS} matched no row, in the same transaction: throws the refusal when the row
 * is there (of the guard's source and owner, when not null), so the caller's transaction rolls back; returns when
 * there is no such row.
 */
export function refuseUsage(driver: SqlDriver, sessionId: string, usage: SessionUsage, guard = ANY): void {
  const row = driver.get<UsageTotals>(
    `SELECT ${USAGE_COUNTERS.join(", ")} FROM agent_sessions WHERE id = ? AND ${STEP_GUARD}`,
    [sessionId, ...stepGuardParams(guard)],
  );
  if (!row) return;
  // Same transaction, same rule: a row that fits would have been updated.
  throw (
    usageRefusal(sessionId, row, usage) ??
    new StorageError(`The usage counters of session "${sessionId}" refused an addition that fits them`)
  );
}
