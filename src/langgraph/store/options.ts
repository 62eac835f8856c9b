/** The options of AgentSessionStore (docs/LANGGRAPH.md "Store"), parsed once into `INVALID_ARGUMENT` refusals. */
import { z } from "zod";
import { parseInput } from "../../schema/parse.js";
import { rule } from "../../schema/to-session-error.js";

/** Options of an AgentSessionStore. */
export interface AgentSessionStoreOptions {
  /**
   * Whose an item is, from its namespace (a search's or a listing's: from its prefix, undefined when the prefix
   * names no owner); default the first label.
   */
  owner?: ((namespace: readonly string[]) => string | undefined) | undefined;
  /** Lets a search or a listing whose prefix names no owner read every owner's items (default false: refused). */
  crossOwnerReads?: boolean | undefined;
  /** Time to live: `defaultTtl` in minutes for puts that give none, `refreshOnRead` (default true), the sweep's interval. */
  ttl?:
    | {
        defaultTtl?: number | undefined;
        refreshOnRead?: boolean | undefined;
        sweepIntervalMinutes?: number | undefined;
      }
    | undefined;
  /** The most items a filtered or text search reads (default 10,000): past it the search is refused `TOO_LARGE`. */
  maxScan?: number | undefined;
}

const minutes = (field: string) =>
  z
    .number(rule(`${field} must be a positive number of minutes`))
    .positive(rule(`${field} must be positive`, "range"));

const schema = z.strictObject({
  owner: z
    .custom<(namespace: readonly string[]) => string | undefined>(
      (v) => typeof v === "function",
      rule("owner must be a function"),
    )
    .optional(),
  crossOwnerReads: z.boolean(rule("crossOwnerReads must be a boolean")).default(false),
  ttl: z
    .strictObject({
      defaultTtl: minutes("ttl.defaultTtl").optional(),
      refreshOnRead: z.boolean(rule("ttl.refreshOnRead must be a boolean")).default(true),
      sweepIntervalMinutes: minutes("ttl.sweepIntervalMinutes").optional(),
    })
    .default({ refreshOnRead: true }),
  maxScan: z
    .number()
    .int(rule("maxScan must be a whole number", "range"))
    .min(1)
    .max(1_000_000)
    .default(10_000),
});

/** The parsed options. */
export type StoreSettings = z.output<typeof schema>;

/** Parses the options (`INVALID_ARGUMENT` naming the option). */
export function storeSettings(options: AgentSessionStoreOptions | undefined): StoreSettings {
  return parseInput(schema, options ?? {});
}

const whole = (field: string, max: number) =>
  z
    .number(rule(`${field} must be a whole number`))
    .int(rule(`${field} must be a whole number`, "range"))
    .min(0)
    .max(max);

/** A search's or listing's page: limit and offset (`INVALID_ARGUMENT` out of range). */
export const pageSchema = z.object({ limit: whole("limit", 10_000), offset: whole("offset", 1_000_000) });

/** A put's key and value: a string key and a plain object. */
export const putSchema = z.object({
  key: z
    .string(rule("key must be a string"))
    .min(1, rule("key must not be empty", "range"))
    .max(1024, rule("key is too long", "too_long")),
  value: z
    .custom<Record<string, unknown>>(
      (v) => typeof v === "object" && v !== null && !Array.isArray(v),
      rule("value must be an object or null"),
    )
    .nullable(),
  ttl: z
    .number(rule("ttl must be a number of minutes or null"))
    .positive(rule("ttl must be positive", "range"))
    .nullable()
    .optional(),
});
