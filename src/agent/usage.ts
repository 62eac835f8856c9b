import type { LanguageModelUsage } from "ai";
import type { AgentSessionUsage, ModelPricing, UsageEntry, UsageTotals } from "./types.js";

// A provider's count as the registry stores it: a whole number from 0 to 2^53 - 1 (anything else reads as 0).
function count(value: unknown): number {
  return typeof value === "number" && value > 0 && value <= Number.MAX_SAFE_INTEGER ? Math.round(value) : 0;
}

/** Cost in US dollars of one call; cache reads and writes fall back to the input price when not priced apart. */
export function costOf(entry: Omit<UsageEntry, "costUsd">, pricing: ModelPricing): number {
  const uncached = Math.max(0, entry.inputTokens - entry.cacheReadTokens - entry.cacheWriteTokens);
  const dollars =
    uncached * pricing.inputPerMillion +
    entry.cacheReadTokens * (pricing.cacheReadPerMillion ?? pricing.inputPerMillion) +
    entry.cacheWriteTokens * (pricing.cacheWritePerMillion ?? pricing.inputPerMillion) +
    entry.outputTokens * pricing.outputPerMillion;
  return dollars / 1_000_000;
}

/** A ledger entry from the AI SDK's usage of one call (its token details, on ai@6 and ai@7). */
export function usageEntry(
  usage: LanguageModelUsage | undefined,
  info: {
    kind: UsageEntry["kind"];
    turn: number;
    step: number;
    model: string;
    pricing?: ModelPricing | undefined;
  },
): UsageEntry {
  const details = usage?.inputTokenDetails;
  const entry: UsageEntry = {
    kind: info.kind,
    turn: info.turn,
    step: info.step,
    model: info.model,
    at: Date.now(),
    inputTokens: count(usage?.inputTokens),
    outputTokens: count(usage?.outputTokens),
    cacheReadTokens: count(details?.cacheReadTokens),
    cacheWriteTokens: count(details?.cacheWriteTokens),
    reasoningTokens: count(usage?.outputTokenDetails?.reasoningTokens),
  };
  if (info.pricing) entry.costUsd = costOf(entry, info.pricing);
  return entry;
}

/** Totals over ledger entries. */
export function sumUsage(entries: readonly UsageEntry[]): UsageTotals {
  const totals: UsageTotals = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    totalTokens: 0,
    steps: 0,
    compactions: 0,
  };
  let cost: number | undefined;
  for (const entry of entries) {
    totals.inputTokens += count(entry.inputTokens);
    totals.outputTokens += count(entry.outputTokens);
    totals.cacheReadTokens += count(entry.cacheReadTokens);
    totals.cacheWriteTokens += count(entry.cacheWriteTokens);
    totals.reasoningTokens += count(entry.reasoningTokens);
    if (entry.kind === "compaction") totals.compactions++;
    else totals.steps++;
    if (typeof entry.costUsd === "number") cost = (cost ?? 0) + entry.costUsd;
  }
  totals.totalTokens = totals.inputTokens + totals.outputTokens;
  if (cost !== undefined) totals.costUsd = cost;
  return totals;
}

/** The session usage for a ledger: the entries plus the totals derived from them. */
export function summarizeUsage(entries: UsageEntry[]): AgentSessionUsage {
  return { ...sumUsage(entries), entries };
}

/** The input tokens of the latest model call of a turn (compaction calls aside), or 0 before the first. */
export function lastStepInputTokens(entries: readonly UsageEntry[]): number {
  for (let i = entries.length - 1; i >= 0; i--)
    if (entries[i]!.kind === "step") return entries[i]!.inputTokens;
  return 0;
}
