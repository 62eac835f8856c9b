// A time given by a caller, checked and written as a timestamptz literal: shared by appends, imports and search
// filters, so it sits on the engine's ground floor.
import { SessionError } from "../../../errors.js";

/**
 * The timestamptz literal of a `toISOString()` time. Postgres reads the four-digit years as they are; others
 * (`+010000-…`, `-000001-…`) it writes as a plain year with an era, which it parses back to the same instant.
 */
export function timestampParam(value: unknown, what: string, path = "createdAt"): string {
  const date = typeof value === "string" ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime()) || date.toISOString() !== value) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${what} needs an ISO-8601 time in toISOString() form, got ${JSON.stringify(value)}`,
      { issues: [{ path, rule: "format" }] },
    );
  }
  const year = date.getUTCFullYear();
  if (year >= 1 && year <= 9999) return value;
  const rest = value.slice(value.indexOf("-", 1));
  return `${String(year > 0 ? year : 1 - year).padStart(4, "0")}${rest}${year > 0 ? "" : " BC"}`;
}
