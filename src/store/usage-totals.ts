/**
 * The one rule for a registry row's usage totals, on every backend: after an addition each token total is within
 * ±(2^53 − 1) (beyond, a JS number no longer counts exactly, and Postgres's bigint overflows at 2^63) and the cost
 * total is a finite number. An addition that would break it is refused whole (`INVALID_ARGUMENT`, naming the
 * session and the counter) and writes nothing: no counter, no activity.
 *
 * The rule is given as a range each stored total must lie in for a delta to be added ({@link usageBounds}), so SQL
 * checks it in the UPDATE's WHERE with plain comparisons (atomic against concurrent additions, and no arithmetic a
 * database could overflow on or round differently), and {@link usageRefusal} names the counter from the same ranges.
 */

import type { SessionInfo, SessionUsage } from "../contract/registry.js";
import { SessionError } from "../errors.js";

/** A registry row's usage counters. */
export type UsageTotals = Pick<
  SessionInfo,
  "input_tokens" | "output_tokens" | "cache_read_tokens" | "cache_write_tokens" | "estimated_cost"
>;

/** The counters, in the order of {@link usageDeltas} and {@link usageBounds}. */
export const USAGE_COUNTERS = [
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "estimated_cost",
] as const satisfies readonly (keyof UsageTotals)[];

/** The {@link SessionUsage} field each of {@link USAGE_COUNTERS} adds up: a refusal's issue names it. */
const USAGE_FIELDS = [
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
  "cost",
] as const satisfies readonly (keyof SessionUsage)[];

const SAFE = Number.MAX_SAFE_INTEGER;
const MAX = Number.MAX_VALUE;

/** The five deltas of a checked usage (`checkUsage`), in {@link USAGE_COUNTERS} order. */
export function usageDeltas(usage: SessionUsage): number[] {
  const { inputTokens, outputTokens, cacheReadTokens = 0, cacheWriteTokens = 0, cost } = usage;
  return [inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, cost];
}

// Exact: the delta is a safe integer (checkUsage), so each bound is one too.
const tokenRange = (delta: number): [number, number] =>
  delta >= 0 ? [-SAFE, SAFE - delta] : [-SAFE - delta, SAFE];

const view = new DataView(new ArrayBuffer(8));

function bitsOf(value: number): bigint {
  view.setFloat64(0, value);
  return view.getBigUint64(0);
}

function fromBits(bits: bigint): number {
  view.setBigUint64(0, bits);
  return view.getFloat64(0);
}

/** The largest total to which `delta` (finite, >= 0) adds to a finite number, as IEEE addition (every backend's) rounds. */
function costCeiling(delta: number): number {
  if (Number.isFinite(MAX + delta)) return MAX;
  // Only a delta near MAX gets here. Doubles >= 0 are ordered like their bit patterns: a binary search over them
  // finds the exact boundary, where `MAX - delta` would be off by the rounding of the subtraction.
  let [low, high] = [0n, bitsOf(MAX)];
  while (low < high) {
    const mid = (low + high + 1n) >> 1n;
    if (Number.isFinite(fromBits(mid) + delta)) low = mid;
    else high = mid - 1n;
  }
  return fromBits(low);
}

const costRange = (delta: number): [number, number] =>
  delta >= 0 ? [-MAX, costCeiling(delta)] : [-costCeiling(-delta), MAX];

/**
 * For each counter in {@link USAGE_COUNTERS} order, the inclusive range (low, high) its stored total must lie in
 * for `usage` to be added: ten numbers, to bind as `counter BETWEEN low AND high`.
 */
export function usageBounds(usage: SessionUsage): number[] {
  return usageDeltas(usage).flatMap((delta, i) => (i < 4 ? tokenRange(delta) : costRange(delta)));
}

/** The refusal of adding `usage` to a row whose counters are `totals`, or undefined when it fits. */
export function usageRefusal(
  sessionId: string,
  totals: UsageTotals,
  usage: SessionUsage,
): SessionError | undefined {
  const bounds = usageBounds(usage);
  const deltas = usageDeltas(usage);
  for (const [i, counter] of USAGE_COUNTERS.entries()) {
    // A driver may hand back a bigint column as a string: compare numbers.
    const total = Number(totals[counter]);
    if (total >= bounds[2 * i]! && total <= bounds[2 * i + 1]!) continue;
    const rule = counter === "estimated_cost" ? "be a finite number" : `stay within ±${SAFE} (2^53 − 1)`;
    return new SessionError(
      "INVALID_ARGUMENT",
      `Usage not added to session "${sessionId}": ${counter} ${total} + ${deltas[i]} would not ${rule}; nothing was written`,
      { issues: [{ path: USAGE_FIELDS[i]!, rule: "range" }] },
    );
  }
  return undefined;
}

/** Throws {@link usageRefusal}'s error unless `usage` can be added to `totals`. */
export function assertUsageFits(sessionId: string, totals: UsageTotals, usage: SessionUsage): void {
  const refusal = usageRefusal(sessionId, totals, usage);
  if (refusal) throw refusal;
}
