import { z } from "zod";
import { SessionError } from "../errors.js";
import { queryLimitsSchema } from "../schema/limits.js";
import { parseInput } from "../schema/parse.js";
import { rule } from "../schema/to-session-error.js";

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

/** A query of at most `max` characters. */
const queryText = (max: number) =>
  z.string(rule("A search query must be a string")).max(max, {
    error: (issue) =>
      `Search query too long: ${(issue.input as string).length} characters, the limit is ${max}. ` +
      "Search for a few distinctive words instead of pasting text.",
  });

/** The query, refused (`INVALID_ARGUMENT` at `query`) when longer than the limit, before any work is done on it. */
export function parseQueryText(query: unknown, limits: QueryLimits): string {
  // The schema is built for a refusal only: every search passes here.
  if (typeof query === "string" && query.length <= limits.maxQueryChars) return query;
  return parseInput(queryText(limits.maxQueryChars), query, { path: "query" });
}

/** Which words a query's count holds: all of them (an all-words search), or ranked recall's content words. */
export type CountedWords = "every word" | "content words";

/**
 * Refuses a query with more distinct words than the limit (counted after repeats collapsed); the message says which
 * words were counted. Hand-written: it bounds what the parsed query costs, a count no schema of the input sees.
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
