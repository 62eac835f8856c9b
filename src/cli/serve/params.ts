/**
 * The viewer API's query parameters: an absent or empty one means its default, a bad one is `INVALID_ARGUMENT`
 * (400) naming the parameter, never a value silently dropped or clamped.
 */
import { isOwnerId } from "../../store/owner.js";
import { CliError } from "../errors.js";

function invalid(name: string, what: string, value: string): never {
  throw new CliError(
    `the "${name}" parameter must be ${what}, got ${JSON.stringify(value)}`,
    "INVALID_ARGUMENT",
  );
}

/** The parameter's value; undefined when it is absent or empty (a form's empty field). */
export function optional(query: URLSearchParams, name: string): string | undefined {
  const value = query.get(name);
  return value === null || value === "" ? undefined : value;
}

/** One of `values`, or undefined. */
export function oneOf<T extends string>(
  query: URLSearchParams,
  name: string,
  values: readonly T[],
): T | undefined {
  const value = optional(query, name);
  if (value === undefined || (values as readonly string[]).includes(value)) return value as T | undefined;
  return invalid(name, values.map((v) => `"${v}"`).join(" or "), value);
}

/** A whole number from `min` to `max` written in decimal digits, or undefined. */
export function wholeParam(
  query: URLSearchParams,
  name: string,
  min: number,
  max: number,
): number | undefined {
  const value = optional(query, name);
  if (value === undefined) return undefined;
  // Digits only, and few enough that Number() is exact: "1e3", " 5" or "0x10" are refused, not read.
  const number = /^\d{1,15}$/.test(value) ? Number(value) : Number.NaN;
  if (!(number >= min && number <= max)) invalid(name, `a whole number from ${min} to ${max}`, value);
  return number;
}

/** An owner id (`owner`: only that owner's sessions), or undefined. */
export function ownerParam(query: URLSearchParams): string | undefined {
  const value = optional(query, "owner");
  if (value !== undefined && !isOwnerId(value))
    invalid("owner", "an owner id (no control characters, at most 256 bytes)", value);
  return value;
}

/** An ISO-8601 time, or undefined. */
export function timeParam(query: URLSearchParams, name: string): string | undefined {
  const value = optional(query, name);
  if (value !== undefined && !Number.isFinite(Date.parse(value))) {
    invalid(name, "an ISO-8601 time (e.g. 2025-11-21 or 2025-11-21T03:54:05Z)", value);
  }
  return value;
}
