import { SessionError } from "../errors.js";
import { queryLimitsSchema } from "../schema/limits.js";
import { parseInput } from "../schema/parse.js";

/**
 * What one search query may cost. A query is user (or model) input: without these bounds a pasted megabyte, or
 * one word repeated thousands of times, compiles to an expression with thousands of terms that blocks the process
 * for minutes (SQLite), overflows the server's stack (Postgres) or scores every message thousands of times
 * (memory). Repeated words collapse before counting, so only distinct words count.
 */
export interface QueryLimits {
  /** Longest query, in characters (UTF-16 code units); a longer one is refused. Default 4,096. */
  maxQueryChars: number;
  /**
   * Most distinct words a query may hold after repeats collapse (each word of a quoted phrase counts); more is
   * refused. Default 32.
   */
  maxQueryTerms: number;
}

/** The defaults: generous for anything a person or a model types, small enough that every query is cheap. */
export const DEFAULT_QUERY_LIMITS: Readonly<QueryLimits> = Object.freeze({
  maxQueryChars: 4096,
  maxQueryTerms: 32,
});

/** Validates query limits given as a store option, filling in the defaults. */
export function queryLimits(options: Partial<QueryLimits> | undefined): QueryLimits {
  if (options === undefined) return DEFAULT_QUERY_LIMITS;
  const { maxQueryChars, maxQueryTerms } = parseInput(queryLimitsSchema, options);
  return {
    maxQueryChars: maxQueryChars ?? DEFAULT_QUERY_LIMITS.maxQueryChars,
    maxQueryTerms: maxQueryTerms ?? DEFAULT_QUERY_LIMITS.maxQueryTerms,
  };
}

/** Refuses a query longer than the limit, before any work is done on it. */
export function assertQueryLength(query: string, limits: QueryLimits): void {
  if (query.length <= limits.maxQueryChars) return;
  throw new SessionError(
    "INVALID_ARGUMENT",
    `Search query too long: ${query.length} characters, the limit is ${limits.maxQueryChars}. ` +
      "Search for a few distinctive words instead of pasting text.",
    { issues: [{ path: "query", rule: "too_long" }] },
  );
}

/** Which words a query's count holds: all of them (an all-words search), or ranked recall's content words. */
export type CountedWords = "every word" | "content words";

/**
 * Refuses a query with more distinct words than the limit (counted after repeats collapsed); the message says which
 * words were counted.
 */
export function assertQueryTerms(
  count: number,
  limits: QueryLimits,
  counted: CountedWords = "every word",
): void {
  if (count <= limits.maxQueryTerms) return;
  const skipped = counted === "content words" ? '; function words such as "the" do not' : "";
  throw new SessionError(
    "INVALID_ARGUMENT",
    `Search query has ${count} distinct words, the limit is ${limits.maxQueryTerms} ` +
      `(each word of a quoted phrase counts${skipped}): search for the few most distinctive ones.`,
    { issues: [{ path: "query", rule: "too_long" }] },
  );
}
