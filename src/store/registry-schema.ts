/**
 * The one input rule of every session registry (memory, SQLite, Postgres), checked before anything is written, so
 * a value one backend would change or refuse (U+0000 on Postgres, a lone surrogate turned into U+FFFD, a count
 * past a bigint) is `INVALID_ARGUMENT` on all of them. `SessionManager` validates with the same schemas.
 */
import { z } from "zod";
import type { NewSessionRecord, SessionListOptions, SessionUsage } from "../contract/registry.js";
import { assertNamedSessionId, isStorableId } from "../message/ids.js";
import { parseInput } from "../schema/parse.js";
import { checkedBy, wholeCount as count, finite } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";
import { assertStoredKey } from "./keys.js";
import { ownerId } from "./owner.js";

/** A string every backend stores exactly (well-formed, no U+0000; `""` is allowed). */
export const text = (field: string) =>
  z.custom<string>(
    (value) => typeof value === "string" && isStorableId(value),
    rule(`${field} must be a well-formed Unicode string without U+0000`, "format"),
  );

/** {@link text}, or null for `undefined` / `null`. */
const optionalText = (field: string) =>
  text(field)
    .nullish()
    .transform((value) => value ?? null);

// A registry delta may be negative: the agent runtime corrects its totals when a saved state replaces another.
const signedCount = (field: string) =>
  z.int(rule(`${field} must be a whole number of at most ${Number.MAX_SAFE_INTEGER} either way`));

/** An object schema for which `undefined` and `null` count as `{}` (its fields then say what is missing). */
const objectOrNone = <S extends z.ZodRawShape>(shape: S, what: string) =>
  z.preprocess((value) => value ?? {}, z.object(shape, rule(`${what} must be an object`)));

/** A registry record before `create` writes it. */
export const sessionRecord = objectOrNone(
  {
    id: checkedBy<string>((value) => assertStoredKey(value, "A session id")),
    name: text("A session name"),
    parentSessionId: optionalText("parentSessionId"),
    model: optionalText("model"),
    source: optionalText("source"),
    owner: ownerId().nullish(),
  },
  "A session record",
);

/**
 * A usage delta: token counts are whole numbers within ±(2^53 - 1), the cost a finite number. Negative deltas are
 * corrections (`SessionManager.addUsage` accepts only counts >= 0, see {@link managerUsage}).
 */
export const usage = objectOrNone(
  {
    inputTokens: signedCount("inputTokens"),
    outputTokens: signedCount("outputTokens"),
    cost: finite("cost"),
    cacheReadTokens: signedCount("cacheReadTokens").default(0),
    cacheWriteTokens: signedCount("cacheWriteTokens").default(0),
  },
  "Usage",
);

/** The paging fields of `list()`. */
export const listShape = {
  limit: count("limit").optional(),
  offset: count("offset").optional(),
  owner: ownerId().optional(),
};

const textRules = new Map<string, z.ZodType<string>>();

/** Throws `INVALID_ARGUMENT` unless `value` is {@link text} (`field` words the message, `path` names it); returns it. */
export function registryText(value: unknown, field: string, path = field): string {
  // A handful of fixed field names: each schema is built once.
  const schema = textRules.get(field) ?? text(field);
  textRules.set(field, schema);
  return parseInput(schema, value, { path });
}

/** Throws unless `value` is a whole number from 0 to 2^53 - 1 (beyond, a JS number no longer counts exactly). */
export function wholeCount(value: unknown, field: string): number {
  return parseInput(count(field), value, { path: field });
}

/** Throws `INVALID_ARGUMENT` unless `value` is a finite number (a cost). */
export function finiteNumber(value: unknown, field: string): number {
  return parseInput(finite(field), value, { path: field });
}

/** Validates a registry record before `create` writes it. */
export function checkRecord(record: unknown): NewSessionRecord {
  return parseInput(sessionRecord, record);
}

/** Validates a usage delta ({@link usage}). */
export function checkUsage(delta: unknown): Required<SessionUsage> {
  return parseInput(usage, delta);
}

const listOptions = objectOrNone(listShape, "List options");

/** Validates the paging options of `list()`. */
export function checkListOptions(options: unknown): SessionListOptions {
  return stripUndefined(parseInput(listOptions, options));
}

/** Most rows a `scan()` page may read: a page is held in memory whole. */
export const MAX_SCAN_PAGE = 10_000;

/** Rows a `scan()` page reads unless told otherwise. */
export const DEFAULT_SCAN_PAGE = 500;

const scanOptions = objectOrNone(
  {
    pageSize: z
      .int(rule(`pageSize must be a whole number from 1 to ${MAX_SCAN_PAGE}`))
      .min(1)
      .max(MAX_SCAN_PAGE)
      .default(DEFAULT_SCAN_PAGE),
    source: text("source").optional(),
  },
  "Scan options",
);

/** Validates the options of `scan()`; the page size with its default, the source when one is asked for. */
export function checkScanOptions(options: unknown): { pageSize: number; source?: string | undefined } {
  return parseInput(scanOptions, options);
}

/** The parsed object without its absent optional fields (`exactOptionalPropertyTypes` and equality in tests). */
export function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** `SessionManager.create(name, options)`'s options: the record's fields, with an id that names a session. */
export const createOptions = z
  .looseObject(
    {
      id: checkedBy<string>(assertNamedSessionId).optional(),
    },
    rule("Session options must be an object"),
  )
  .optional();

/** `SessionManager.addUsage`'s arguments: counts are whole numbers >= 0, the cost a finite number >= 0. */
export const managerUsage = z.object({
  cost: z.number(rule("cost must be a finite number >= 0")).min(0),
  cache: z
    .object(
      {
        cacheReadTokens: count("cacheReadTokens").default(0),
        cacheWriteTokens: count("cacheWriteTokens").default(0),
      },
      rule("Cache usage must be an object"),
    )
    .default({ cacheReadTokens: 0, cacheWriteTokens: 0 }),
  inputTokens: count("inputTokens"),
  outputTokens: count("outputTokens"),
});

/** `SessionManager.list(options)`: none, or an object of paging fields. */
export const managerListOptions = z.object(listShape, rule("List options must be an object")).optional();
