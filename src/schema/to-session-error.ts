/**
 * The one bridge from a zod schema to the library's errors. Inputs off the append path (builder and store options,
 * registry records, usage, transfer records, `persistChatTurn` requests, `send()` input) are described as zod 4
 * schemas in this folder and parsed with {@link parseInput}, which turns the first issue into a `SessionError`
 * with the code the caller names. The append path's message and Unicode checks stay hand-written in `message.ts`:
 * they run on every write, where a schema's allocation per field would show in the append benchmark.
 */
import { z } from "zod";
import { SessionError, type SessionErrorCode } from "../errors.js";
import { describe } from "../message.js";

type Issue = z.core.$ZodRawIssue;

/**
 * A schema's own message: `text` names the field and the rule, and the refused value is appended as `got …`, the
 * way every hand-written check of the library worded it.
 */
export function rule(text: string): { error: (issue: Issue) => string } {
  return { error: (issue) => `${text}, got ${describe(issue.input)}` };
}

/** A message that needs no `got …` (the rule is about the whole input, e.g. "use either resume or fork"). */
export function says(text: string): { error: () => string } {
  return { error: () => text };
}

/**
 * Where a schema gave no message of its own (a foreign schema such as the AI SDK's), zod's English text is kept
 * and the field it is about is named from the issue's path, so the message still says where the input is wrong.
 */
function fallback(what: string | undefined) {
  return (issue: Issue): string => {
    const text = z.core.config().localeError?.(issue);
    const message = typeof text === "string" ? text : (text?.message ?? "Invalid input");
    const path = issue.path?.map(String).join(".") ?? "";
    const field = [what, path].filter(Boolean).join(" ");
    return field ? `${field}: ${message}` : message;
  };
}

/** The `SessionError` (`code`, default `INVALID_ARGUMENT`) for a failed parse: its first issue's message. */
export function toSessionError(error: z.ZodError, code: SessionErrorCode = "INVALID_ARGUMENT"): SessionError {
  return new SessionError(code, error.issues[0]?.message ?? "Invalid input");
}

/** How {@link parseInput} reports a refusal. */
export interface ParseOptions {
  /** The error code (default `INVALID_ARGUMENT`). */
  code?: SessionErrorCode;
  /** Names the input in messages a schema did not word itself (foreign schemas). */
  what?: string;
}

/** Parses `value` with `schema`, or throws the `SessionError` {@link toSessionError} makes of the first issue. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  options: ParseOptions = {},
): z.output<S> {
  const result = schema.safeParse(value, { error: fallback(options.what) });
  if (result.success) return result.data;
  throw toSessionError(result.error, options.code);
}
