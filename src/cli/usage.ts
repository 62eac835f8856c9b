import type { SessionInfo } from "../contract/registry.js";

/** Recorded usage (addUsage) as the CLI and the viewer show it: of one session, or summed over a store. */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  cost: number;
}

/** The usage a registry row records. */
export function usageOf(info: SessionInfo): UsageTotals {
  return {
    inputTokens: info.input_tokens,
    outputTokens: info.output_tokens,
    cacheReadTokens: info.cache_read_tokens,
    cacheWriteTokens: info.cache_write_tokens,
    cost: info.estimated_cost,
  };
}
