/**
 * The small schemas every input schema is built from, each carrying the message the library has always given for
 * it (the field, the rule, then `got …`).
 */
import { z } from "zod";
import { SessionError, type SessionIssueRule } from "../errors.js";
import { describe } from "../message/describe.js";
import { rule } from "./to-session-error.js";

/** A function; `text` names the option (e.g. "onCompaction needs a function"). */
export const func = <F extends (...args: never[]) => unknown>(text: string) =>
  z.custom<F>((value) => typeof value === "function", rule(text, "type"));

/** A whole number >= `min` (any size `Number.isInteger` accepts, not only safe integers). */
export const wholeAtLeast = (min: number, field: string) =>
  z
    .number(rule(`${field} must be a whole number >= ${min}`))
    .refine(Number.isInteger, { params: { rule: "range" } })
    .min(min);

/** A whole number from 0 to 2^53 - 1 (beyond, a JS number no longer counts exactly). */
export const wholeCount = (field: string) =>
  z.int(rule(`${field} must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`)).min(0);

/** A finite number (`z.number()` refuses NaN and ±Infinity). */
export const finite = (field: string) => z.number(rule(`${field} must be a finite number`));

/**
 * A rule whose refusal depends on the value: `problem` words why a value is refused (undefined when it passes),
 * and `kind` names the rule it broke.
 */
export const refusedBy = <T>(
  problem: (value: unknown) => string | undefined,
  kind: (value: unknown) => SessionIssueRule,
) =>
  z.custom<T>().check((ctx) => {
    const message = problem(ctx.value);
    if (message === undefined) return;
    ctx.issues.push({ code: "custom", input: ctx.value, message, params: { rule: kind(ctx.value) } });
  });

/**
 * A number that passes `test`, its refusal worded by `text` (then `got …`): a missing value breaks `required`,
 * another kind of value `type`, and a number that fails `test` (NaN and ±Infinity included, which `z.number()`
 * would call a wrong type) `range`.
 */
export const numberWhere = (text: string, test: (value: number) => boolean) =>
  refusedBy<number>(
    (value) => (typeof value === "number" && test(value) ? undefined : `${text}, got ${describe(value)}`),
    (value) => (value === undefined ? "required" : typeof value === "number" ? "range" : "type"),
  );

/**
 * A rule that stays hand-written because the append path runs it on every write (ids, Unicode): the schema
 * calls it, and the `SessionError` it throws keeps its code and message, its issue at the field's path with the
 * rule the error names (`kind` when it names none).
 */
export const checkedBy = <T>(
  assert: (value: unknown) => asserts value is T,
  kind: SessionIssueRule = "format",
) => z.custom<T>().check(issueOf(assert, kind));

/**
 * A zod check running a hand-written `assert`: the `SessionError` it throws becomes the issue (see
 * {@link checkedBy}). Its rule is the error's own (a too long id is `too_long`, a number `type`), else `kind`; its
 * path stays the schema's, since an assert names its field as its caller would (`sessionId` for a record's `id`).
 */
export const issueOf =
  (assert: (value: unknown) => void, kind: SessionIssueRule) =>
  (ctx: { value: unknown; issues: z.core.$ZodRawIssue[] }): void => {
    try {
      assert(ctx.value);
    } catch (error) {
      if (!(error instanceof SessionError)) throw error;
      ctx.issues.push({
        code: "custom",
        input: ctx.value,
        message: error.message,
        params: { rule: error.issues?.[0]?.rule ?? kind, error },
      });
    }
  };
