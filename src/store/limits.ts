import { z } from "zod";
import { parseInput } from "../schema/parse.js";
import { numberWhere } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";

/** Default number of search hits. */
export const DEFAULT_SEARCH_LIMIT = 20;
/**
 * Upper bound on a search limit, so one call can never materialise an unbounded result; a larger limit is refused
 * rather than cut short, so a caller never mistakes the first 1,000 hits for all of them.
 */
export const MAX_SEARCH_LIMIT = 1000;
/**
 * Relevance is ranked among at most this many newest matches, so a common word never forces scoring every match
 * in a large store (see docs/PERFORMANCE.md).
 */
export const SEARCH_CANDIDATES = 2000;
/**
 * A hit names the overlay covering it among its session's newest this many: an overlay is one summary, so a
 * session has few, and the look-up stays bounded in one that has many.
 */
export const SEARCH_OVERLAYS = 256;

/** A search limit: a whole number from 0 to {@link MAX_SEARCH_LIMIT} (`range`; another kind of value `type`). */
export const searchLimitSchema = numberWhere(
  `Search limit must be a whole number from 0 to ${MAX_SEARCH_LIMIT}`,
  (n) => Number.isInteger(n) && n >= 0 && n <= MAX_SEARCH_LIMIT,
);

/** Validates a search limit (default 20); throws `INVALID_ARGUMENT` for anything but a whole number 0–1,000. */
export function searchLimit(limit: unknown): number {
  if (limit === undefined || limit === null) return DEFAULT_SEARCH_LIMIT;
  return parseInput(searchLimitSchema, limit, { path: "limit" });
}

// No path holds this many messages, so a larger floor (Infinity included) reads the same rows; Postgres binds it as
// an integer.
const MAX_RECENT = 2 ** 31 - 1;

const budget = z.object({
  maxContentBytes: numberWhere("maxContentBytes must be a number >= 0", (bytes) => bytes >= 0),
  minRecentMessages: z
    .custom<number>(
      (n) => typeof n === "number" && !Number.isNaN(n),
      rule("minRecentMessages must be a number", "type"),
    )
    .optional(),
});

/** Validates a byte budget for getRecentHistory (a floor above 2^31 - 1 messages, Infinity too, means "all"). */
export function byteBudget(maxBytes: unknown, minRecent: unknown): { maxBytes: number; minRecent: number } {
  const { maxContentBytes, minRecentMessages = 1 } = parseInput(budget, {
    maxContentBytes: maxBytes,
    minRecentMessages: minRecent,
  });
  return {
    maxBytes: maxContentBytes,
    minRecent: Math.min(MAX_RECENT, Math.max(1, Math.floor(minRecentMessages))),
  };
}
