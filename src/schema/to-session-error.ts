/**
 * The one bridge from a zod schema to the library's errors. Inputs off the append path (builder and store options,
 * registry records, usage, transfer records, `persistChatTurn` requests, `send()` input) are described as zod 4
 * schemas in this folder and parsed with {@link parseInput}, which turns the first issue into a `SessionError`
 * with the code the caller names. The append path's message and Unicode checks stay hand-written in `message/`:
 * they run on every write, where a schema's allocation per field would show in the append benchmark.
 */
import { z } from "zod";
import { SessionError, type SessionErrorCode } from "../errors.js";
import { describe } from "../message/describe.js";

type Issue = z.core.$ZodRawIssue;

/**
 * A schema's own message: `text` names the field and the rule, and the refused value is appended as `got …`, the
 * way every hand-written check of the library worded it.
 */
export function rule(text: string): { error: (issue: Issue) => string } {
  return { error: (issue) => `${text}, got ${describe(issue.input)}` };
}

// Marks a message about a field of a named record (ruleOf): the record's name goes in when the parse fails, so
// one schema built once can name each of a million records ("The parent of message "m2" must be …").
const OF_RECORD = "\u0002";

/**
 * {@link rule} for a field of a record the message names: `ruleOf("The parent", "must be …")` reads
 * `The parent of message "m2" must be …, got …`, the record's name (`message "m2"`) given by the caller's
 * {@link ParseOptions.of} when the parse fails.
 */
export function ruleOf(field: string, text: string): { error: (issue: Issue) => string } {
  return { error: (issue) => `${OF_RECORD}${field}${OF_RECORD}${text}, got ${describe(issue.input)}` };
}

/**
 * A message our schema worded: a ruleOf message gets its record named by `options.of` (`The parent of message
 * "m2" must be …`, or `The parent must be …` without it); any other is final.
 */
function worded(message: string, options: ParseOptions, input: unknown): string {
  if (!message.startsWith(OF_RECORD)) return message;
  const of = options.of?.(input);
  const end = message.indexOf(OF_RECORD, 1);
  const field = message.slice(OF_RECORD.length, end);
  return `${field}${of === undefined ? "" : ` of ${of}`} ${message.slice(end + OF_RECORD.length)}`;
}

/** A message that needs no `got …` (the rule is about the whole input, e.g. "use either resume or fork"). */
export function says(text: string): { error: () => string } {
  return { error: () => text };
}

// Marks zod's own wording (a foreign schema's issue, such as the AI SDK's): such a message gets its field named
// from the issue's path when it becomes a SessionError. Our schemas word their messages themselves.
const ZOD_WORDING = "\u0001";

function zodWording(issue: Issue): string {
  const text = z.core.config().localeError?.(issue);
  return ZOD_WORDING + (typeof text === "string" ? text : (text?.message ?? "Invalid input"));
}

type Finished = z.core.$ZodIssue;

/**
 * The issue that says most: for a union none of whose branches matched (zod says only "Invalid input"), the
 * deepest issue of any branch, with its path made whole, so "content.0.text: expected string" beats "content".
 */
function telling(issue: Finished, path: PropertyKey[] = []): { issue: Finished; path: PropertyKey[] } {
  const at = [...path, ...issue.path];
  const worded = !issue.message.startsWith(ZOD_WORDING);
  if (worded || issue.code !== "invalid_union" || issue.errors.length === 0) return { issue, path: at };
  const deepest = issue.errors
    .flat()
    .map((inner) => telling(inner, at))
    .reduce((best, next) => (next.path.length > best.path.length ? next : best));
  return deepest.path.length > at.length ? deepest : { issue, path: at };
}

/**
 * The `SessionError` (`code`, default `INVALID_ARGUMENT`) for a failed parse of `input`, worded by its first
 * issue.
 */
export function toSessionError(error: z.ZodError, options: ParseOptions = {}, input?: unknown): SessionError {
  const { code = "INVALID_ARGUMENT", what } = options;
  const first = error.issues[0];
  if (!first) return new SessionError(code, what ?? "Invalid input");
  const { issue, path } = telling(first);
  if (!issue.message.startsWith(ZOD_WORDING))
    return new SessionError(code, worded(issue.message, options, input));
  const field = path.map(String).join(".");
  const text = issue.message.slice(ZOD_WORDING.length);
  return new SessionError(code, [what, field && `${field}:`, text].filter(Boolean).join(" "));
}

/** How {@link parseInput} reports a refusal. */
export interface ParseOptions {
  /** The error code (default `INVALID_ARGUMENT`). */
  code?: SessionErrorCode;
  /** Begins the messages a schema did not word itself (a foreign schema's), e.g. "send() got a bad message:". */
  what?: string;
  /** Names the record `input` is, for the messages of {@link ruleOf} rules (e.g. `message "m2"`); called on failure only. */
  of?: (input: unknown) => string;
}

/** Parses `value` with `schema`, or throws the `SessionError` {@link toSessionError} makes of the first issue. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  options: ParseOptions = {},
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // Parsed again to word the issues: a per-parse error map makes every parse several times slower (~5 µs more
  // for a transfer record, which an import of a million records would pay), so only a refused input pays it.
  const worded = schema.safeParse(value, { error: zodWording });
  throw toSessionError(worded.success ? result.error : worded.error, options, value);
}
