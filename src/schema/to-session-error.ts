/**
 * The one mapping from a zod issue to the library's errors, and the wording our schemas give their issues. A
 * schema words its own messages ({@link rule}, {@link ruleOf}, {@link says}); the field and the rule travel as
 * data, in the issue's path and its `params` (`rule`, `field`), and become the `SessionError`'s `issues`.
 */
import type { z } from "zod";
import { SessionError, type SessionErrorCode, type SessionIssue, type SessionIssueRule } from "../errors.js";
import { describe } from "../message/describe.js";

type Issue = z.core.$ZodRawIssue;
type Finished = z.core.$ZodIssue;

/** What a refused input's issue carries besides its message (a custom check's `params`). */
export interface IssueParams {
  /** The rule broken, when the check's kind does not say it (a custom check). */
  rule?: SessionIssueRule;
  /** The field's words in the message (`The parent`), after which {@link ParseOptions.of} names the record. */
  field?: string;
  /** The hand-written check's own error (`checkedBy`), kept with its code and message. */
  error?: SessionError;
}

type Wording = { error: (issue: Issue) => string; params?: IssueParams };

/**
 * A schema's own message: `text` names the field and the rule, and the refused value is appended as `got …`, the
 * way every hand-written check of the library worded it. `kind` is the rule of a custom check (zod's own checks
 * say theirs: a wrong type, a number out of range).
 */
export function rule(text: string, kind?: SessionIssueRule): Wording {
  const error = (issue: Issue) => `${text}, got ${describe(issue.input)}`;
  return kind === undefined ? { error } : { error, params: { rule: kind } };
}

/**
 * {@link rule} for a field of a record the message names, as a custom check: `ruleOf("The parent", "must be …")`
 * reads `The parent of message "m2" must be …, got …`, the record's name (`message "m2"`) given by the caller's
 * {@link ParseOptions.of} when the parse fails (`The parent must be …` without it).
 */
export function ruleOf(field: string, text: string, kind: SessionIssueRule = "type"): Wording {
  return {
    error: (issue) => `${field} ${text}, got ${describe(issue.input)}`,
    params: { rule: kind, field },
  };
}

/** A message that needs no `got …` (the rule is about the whole input, e.g. "use either resume or fork"). */
export function says(text: string, kind?: SessionIssueRule): { error: () => string; params?: IssueParams } {
  const error = () => text;
  return kind === undefined ? { error } : { error, params: { rule: kind } };
}

/** The rule an issue broke: a custom check names it, zod's own checks say it by their code. */
function ruleOfIssue(issue: Finished): SessionIssueRule {
  switch (issue.code) {
    case "invalid_type":
      return issue.input === undefined ? "required" : "type";
    case "too_big":
      return issue.origin === "number" || issue.origin === "int" || issue.origin === "bigint"
        ? "range"
        : "too_long";
    case "too_small":
    case "not_multiple_of":
      return "range";
    case "invalid_format":
      return "format";
    case "invalid_value":
      return "one_of";
    case "invalid_union":
      // A discriminated union whose tag names no branch (an unknown `type`): a value outside a fixed set.
      return "discriminator" in issue ? "one_of" : "type";
    case "unrecognized_keys":
      return "unknown_key";
    case "custom":
      return (issue.params as IssueParams | undefined)?.rule ?? "invalid";
    default:
      return "type";
  }
}

/**
 * The issue that says most: for a union none of whose branches matched (zod says only "Invalid input"), the
 * deepest issue of any branch, with its path made whole, so "content.0.text: expected string" beats "content".
 */
function telling(
  issue: Finished,
  foreign: ReadonlySet<string>,
  path: PropertyKey[] = [],
): { issue: Finished; path: PropertyKey[] } {
  const at = [...path, ...issue.path];
  if (!foreign.has(issue.message) || issue.code !== "invalid_union" || issue.errors.length === 0)
    return { issue, path: at };
  const deepest = issue.errors
    .flat()
    .map((inner) => telling(inner, foreign, at))
    .reduce((best, next) => (next.path.length > best.path.length ? next : best));
  return deepest.path.length > at.length ? deepest : { issue, path: at };
}

/**
 * The issues one zod issue at `path` stands for: an unknown key's at the key itself (one per key, zod puts it at
 * the object holding the keys), any other the issue itself.
 */
function issuesOf(
  issue: Finished,
  path: readonly PropertyKey[],
): { path: PropertyKey[]; rule: SessionIssueRule }[] {
  if (issue.code === "unrecognized_keys" && issue.keys.length > 0)
    return issue.keys.map((key) => ({ path: [...path, key], rule: "unknown_key" }));
  return [{ path: [...path], rule: ruleOfIssue(issue) }];
}

/** How {@link toSessionError} reports a refusal. */
export interface ParseOptions {
  /** The error code (default `INVALID_ARGUMENT`). */
  code?: SessionErrorCode;
  /** Begins the messages a schema did not word itself (a foreign schema's), e.g. "send() got a bad message:". */
  what?: string;
  /** Names the record `input` is, for the messages of {@link ruleOf} rules (e.g. `message "m2"`); called on failure only. */
  of?: (input: unknown) => string;
  /** Where the parsed value sits, put before each issue's path (`maxMessageBytes` for that option parsed alone). */
  path?: string;
}

/**
 * The `SessionError` (`code`, default `INVALID_ARGUMENT`) for a failed parse of `input`: its message is the first
 * issue's, its `issues` every issue's path and rule. `foreign` holds the messages zod worded itself (a foreign
 * schema's, such as the AI SDK's): those get their field named from the path.
 */
export function toSessionError(
  error: z.ZodError,
  options: ParseOptions = {},
  input?: unknown,
  foreign: ReadonlySet<string> = new Set(),
): SessionError {
  const { code = "INVALID_ARGUMENT", what } = options;
  const dotted = (path: readonly PropertyKey[]) =>
    [options.path, ...path.map(String)].filter((part) => part !== undefined && part !== "").join(".");
  const [first, ...rest] = error.issues;
  if (!first)
    return new SessionError(code, what ?? "Invalid input", {
      issues: [{ path: dotted([]), rule: "invalid" }],
    });
  const { issue, path } = telling(first, foreign);
  const params = issue.code === "custom" ? (issue.params as IssueParams | undefined) : undefined;
  const issues: SessionIssue[] = [
    ...issuesOf(issue, path),
    ...rest.flatMap((other) => issuesOf(other, other.path)),
  ].map((one) => ({ path: dotted(one.path), rule: one.rule }));
  if (params?.error) return new SessionError(params.error.code, params.error.message, { issues });
  if (foreign.has(issue.message)) {
    const field = path.map(String).join(".");
    return new SessionError(code, [what, field && `${field}:`, issue.message].filter(Boolean).join(" "), {
      issues,
    });
  }
  const of = params?.field === undefined ? undefined : options.of?.(input);
  const message =
    of === undefined || params?.field === undefined
      ? issue.message
      : `${params.field} of ${of}${issue.message.slice(params.field.length)}`;
  return new SessionError(code, message, { issues });
}

/**
 * Runs `check`, a hand-written check of the value at `path` in the caller's argument (e.g. the message a transfer
 * record's `content` holds): a refusal it throws keeps its code and message, its issue paths made whole from there.
 */
export function checkedAt<T>(path: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof SessionError) || error.issues === undefined) throw error;
    const issues = error.issues.map((one) => ({
      path: [path, one.path].filter((part) => part !== "").join("."),
      rule: one.rule,
    }));
    throw new SessionError(error.code, error.message, { cause: error.cause, issues });
  }
}
