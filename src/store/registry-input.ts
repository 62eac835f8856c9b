import { SessionError } from "../errors.js";
import { describe, isStorableId } from "../message.js";
import { assertStoredKey } from "./keys.js";
import type { NewSessionRecord, SessionListOptions, SessionUsage } from "./types.js";

/**
 * The one input rule of every session registry (memory, SQLite, Postgres), checked before anything is written, so
 * a value one backend would change or refuse (U+0000 on Postgres, a lone surrogate turned into U+FFFD, a count
 * past a bigint) is `INVALID_ARGUMENT` on all of them. `SessionManager` validates with the same helpers.
 */

const invalid = (message: string) => new SessionError("INVALID_ARGUMENT", message);

/** Throws unless `value` is a string every backend stores exactly (well-formed, no U+0000; `""` is allowed). */
export function registryText(value: unknown, field: string): string {
  if (typeof value !== "string" || !isStorableId(value)) {
    throw invalid(`${field} must be a well-formed Unicode string without U+0000, got ${describe(value)}`);
  }
  return value;
}

/** {@link registryText}, or null for `undefined` / `null`. */
function optionalRegistryText(value: unknown, field: string): string | null {
  return value === undefined || value === null ? null : registryText(value, field);
}

/** Throws unless `value` is a whole number from 0 to 2^53 - 1 (beyond, a JS number no longer counts exactly). */
export function wholeCount(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw invalid(
      `${field} must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, got ${describe(value)}`,
    );
  }
  return value;
}

// A registry delta may be negative: the agent runtime corrects its totals when a saved state replaces another.
function signedCount(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value)) {
    throw invalid(
      `${field} must be a whole number of at most ${Number.MAX_SAFE_INTEGER} either way, got ${describe(value)}`,
    );
  }
  return value;
}

/** Throws `INVALID_ARGUMENT` unless `value` is a finite number (a cost). */
export function finiteNumber(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw invalid(`${field} must be a finite number, got ${describe(value)}`);
  }
  return value;
}

/** Throws unless `value` is an object (not an array); `undefined` and `null` count as none. */
function optionalObject(value: unknown, what: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value))
    throw invalid(`${what} must be an object, got ${describe(value)}`);
  return value as Record<string, unknown>;
}

/** Validates a registry record before `create` writes it. */
export function checkRecord(record: unknown): NewSessionRecord {
  const r = optionalObject(record, "A session record");
  assertStoredKey(r.id, "A session id");
  return {
    id: r.id,
    name: registryText(r.name, "A session name"),
    parentSessionId: optionalRegistryText(r.parentSessionId, "parentSessionId"),
    model: optionalRegistryText(r.model, "model"),
    source: optionalRegistryText(r.source, "source"),
  };
}

/**
 * Validates a usage delta: token counts are whole numbers within ±(2^53 - 1), the cost a finite number. Negative
 * deltas are corrections (`SessionManager.addUsage` accepts only counts >= 0, see its `usageDelta`).
 */
export function checkUsage(usage: unknown): Required<SessionUsage> {
  const u = optionalObject(usage, "Usage");
  const optional = (value: unknown, field: string) => (value === undefined ? 0 : signedCount(value, field));
  return {
    inputTokens: signedCount(u.inputTokens, "inputTokens"),
    outputTokens: signedCount(u.outputTokens, "outputTokens"),
    cost: finiteNumber(u.cost, "cost"),
    cacheReadTokens: optional(u.cacheReadTokens, "cacheReadTokens"),
    cacheWriteTokens: optional(u.cacheWriteTokens, "cacheWriteTokens"),
  };
}

/** Validates the paging options of `list()`. */
export function checkListOptions(options: unknown): SessionListOptions {
  const { limit, offset } = optionalObject(options, "List options");
  return {
    ...(limit === undefined ? {} : { limit: wholeCount(limit, "limit") }),
    ...(offset === undefined ? {} : { offset: wholeCount(offset, "offset") }),
  };
}
