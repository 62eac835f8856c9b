import { SessionError } from "../errors.js";
import { count } from "../message/describe.js";
import type { CompactFunction, CompactSettings } from "../utils/compaction-helpers.js";

/**
 * Refuses a threshold that a compaction function made by `createCompactFunction` can never get the history under:
 * it keeps up to `tailTokenBudget` tokens of recent messages verbatim, so with `compactAfter` below that budget the
 * history either never has anything to compact or stays above the threshold after every compaction and calls the
 * model again on each append. Checked whenever either setting is made, in whichever order. Hand-written: a clash
 * between two settings made apart, each valid alone (their schemas check them).
 */
export function assertCompactionFits(threshold: number | undefined, fn: CompactFunction | undefined): void {
  const settings = (fn as { settings?: CompactSettings } | undefined)?.settings;
  if (threshold === undefined || settings === undefined || threshold >= settings.tailTokenBudget) return;
  const budget = count(settings.tailTokenBudget);
  throw new SessionError(
    "INVALID_ARGUMENT",
    `compactAfter(${count(threshold)}) is below the compaction function's tailTokenBudget (${budget}): a compaction keeps up to ${budget} tokens of recent messages verbatim, so the history could never get under the threshold. Raise compactAfter to at least ${budget}, or give createCompactFunction a tailTokenBudget below ${count(threshold)}.`,
    { issues: [{ path: "compactAfter", rule: "conflict" }] },
  );
}
