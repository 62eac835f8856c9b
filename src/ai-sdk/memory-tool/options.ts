/**
 * The memory tool's options as schemas, checked once when `memoryTool` or `memoryFilesContext` is made (never on a
 * command): a refusal is `INVALID_ARGUMENT` naming the option (`owner`, `limits.maxFiles`, `maxAttempts`).
 */
import { z } from "zod";
import { describe } from "../../message/describe.js";
import { isNameWithin, MAX_NAME_BYTES } from "../../message/ids.js";
import { numberWhere, refusedBy } from "../../schema/rules.js";
import { rule } from "../../schema/to-session-error.js";
import { MEMORIES_ROOT } from "./paths.js";

const ONE_SCOPE = "Give the memory tool exactly one of owner and sessionId";

/** An owner or session id naming the directory: non-empty, well-formed, within the registry's name size. */
const scopeName = (field: "owner" | "sessionId") =>
  refusedBy<string>(
    (value) =>
      typeof value === "string" && value !== "" && isNameWithin(value, MAX_NAME_BYTES)
        ? undefined
        : `${field} must be a non-empty, well-formed string without U+0000 of at most ${MAX_NAME_BYTES} bytes, got ${describe(value)}`,
    (value) => (typeof value === "string" ? "format" : "type"),
  );

/**
 * Options holding a scope: exactly one of `owner` and `sessionId`, besides `fields` (other keys, such as `store`,
 * pass through).
 */
const scoped = <S extends z.core.$ZodLooseShape>(fields: S) =>
  z
    .looseObject(
      { owner: scopeName("owner").optional(), sessionId: scopeName("sessionId").optional(), ...fields },
      rule("The memory tool expects an options object", "type"),
    )
    .check((ctx) => {
      const { owner, sessionId } = ctx.value as { owner?: unknown; sessionId?: unknown };
      if ((owner === undefined) !== (sessionId === undefined)) return;
      ctx.issues.push({
        code: "custom",
        input: ctx.value,
        path: [owner === undefined ? "owner" : "sessionId"],
        message: ONE_SCOPE,
        params: { rule: owner === undefined ? "required" : "conflict" },
      });
    });

/** Whose directory (`memoryToolKey`'s argument). */
export const memoryScopeSchema = scoped({});

const atLeastOne = (name: string) =>
  numberWhere(
    `limits.${name} must be a whole number of at least 1`,
    (n) => Number.isSafeInteger(n) && n >= 1,
  );

// The shortest path the tool can hold: "/memories/" and a one-character name.
const MIN_PATH_BYTES = MEMORIES_ROOT.length + 2;

/** `limits`: each a whole number of at least 1 (a path limit leaving room for a name), no unknown limit. */
export const memoryLimitsSchema = z.strictObject(
  {
    maxFileBytes: atLeastOne("maxFileBytes").optional(),
    maxFiles: atLeastOne("maxFiles").optional(),
    maxTotalBytes: atLeastOne("maxTotalBytes").optional(),
    maxPathBytes: numberWhere(
      `limits.maxPathBytes must be a whole number of at least ${MIN_PATH_BYTES} (room for a name under ${MEMORIES_ROOT}/)`,
      (n) => Number.isSafeInteger(n) && n >= MIN_PATH_BYTES,
    ).optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `Unknown memory tool limit ${issue.keys.map((key) => JSON.stringify(key)).join(", ")}: the limits are maxFileBytes, maxFiles, maxTotalBytes and maxPathBytes`
        : rule("limits must be an object").error(issue as never),
  },
);

/** `memoryTool`'s options: the scope, `limits` and `maxAttempts` (from 1 to 100). */
export const memoryToolOptionsSchema = scoped({
  limits: memoryLimitsSchema.optional(),
  maxAttempts: numberWhere(
    "maxAttempts must be a whole number from 1 to 100",
    (n) => Number.isSafeInteger(n) && n >= 1 && n <= 100,
  ).optional(),
});

/** `memoryFilesContext`'s options: the scope and `maxBytes` (a whole number >= 0). */
export const memoryFilesContextSchema = scoped({
  maxBytes: numberWhere(
    "maxBytes must be a whole number of at least 0",
    (n) => Number.isSafeInteger(n) && n >= 0,
  ).optional(),
});
