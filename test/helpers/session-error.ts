// Asserting a refused input by what a program reads, the code and the field, not by the message's wording.
import assert from "node:assert/strict";
import { SessionError, type SessionErrorCode, type SessionIssueRule } from "../../src/errors.js";

/** What a refusal must be: its code, the path of its first issue and, when given, that issue's rule. */
export interface Refusal {
  code: SessionErrorCode;
  path: string;
  rule?: SessionIssueRule;
}

function check(error: unknown, expected: Refusal): true {
  assert.ok(error instanceof SessionError, `expected a SessionError, got ${String(error)}`);
  assert.equal(error.code, expected.code, error.message);
  assert.equal(error.issues?.[0]?.path, expected.path, error.message);
  if (expected.rule !== undefined) assert.equal(error.issues?.[0]?.rule, expected.rule, error.message);
  return true;
}

/** Asserts that `fn` throws a `SessionError` with `code` whose first issue is at `path` (and has `rule`). */
export function assertSessionError(fn: () => unknown, expected: Refusal): void {
  assert.throws(fn, (error) => check(error, expected));
}

/** {@link assertSessionError} for a promise (or a function returning one) that must reject. */
export async function rejectsWithIssue(
  promise: Promise<unknown> | (() => Promise<unknown>),
  expected: Refusal,
): Promise<void> {
  await assert.rejects(promise, (error) => check(error, expected));
}
