import { byteBudget } from "./limits.js";

/** How many messages at the end of a path fit a byte budget, and the bytes of the whole path. */
export interface RecentWindow {
  count: number;
  totalBytes: number;
}

/**
 * The longest suffix of a path (sizes root first) whose bytes fit `maxBytes`, but always at least the leaf and
 * at least `minRecent` messages (the reference's getRecentHistory rule).
 */
export function recentWindow(sizes: readonly number[], maxBytes: number, minRecent?: number): RecentWindow {
  const budget = byteBudget(maxBytes, minRecent);
  let totalBytes = 0;
  for (const size of sizes) totalBytes += size;
  let used = 0;
  let count = 0;
  for (let i = sizes.length - 1; i >= 0; i--) {
    const size = sizes[i]!;
    if (count >= budget.minRecent && used + size > budget.maxBytes) break;
    used += size;
    count++;
  }
  return { count, totalBytes };
}
