/**
 * The constructor arguments of the file and Redis storages as schemas (the factory checks only the option names,
 * factory-schema.ts): a refusal is `INVALID_ARGUMENT` at the argument's path (`dir`, `compactLogBytes`, `prefix`).
 */
import { z } from "zod";
import { describe } from "../../message/describe.js";
import { numberWhere, refusedBy } from "../../schema/rules.js";
import { rule } from "../../schema/to-session-error.js";

/** `FileSessionStorage`'s directory: a non-empty path. */
export const fileDirSchema = refusedBy<string>(
  (value) =>
    typeof value === "string" && value.length > 0
      ? undefined
      : `FileSessionStorage needs a directory path, got ${describe(value)}`,
  (value) => (typeof value === "string" || value === undefined ? "required" : "type"),
);

/** `FileSessionStorage`'s options (`fsync` is read as given, as it always was). */
export const fileOptionsSchema = z.looseObject(
  {
    compactLogBytes: numberWhere(
      "compactLogBytes must be a whole number >= 0",
      (n) => Number.isInteger(n) && n >= 0,
    ).optional(),
  },
  rule("FileSessionStorage options must be an object"),
);

/** `RedisSessionStorage`'s options object (a plain string is the prefix itself). */
export const redisOptionsSchema = z.looseObject(
  { prefix: z.string(rule("prefix must be a string")).optional() },
  rule("Redis storage options must be an object or a prefix string"),
);
