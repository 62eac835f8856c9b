/**
 * The one harness of both contract suites (the store contract and the agent `SessionStorage` contract): the test
 * runner, injected by the caller (`describe` and `it` of node:test, vitest, jest or mocha all fit
 * {@link TestApi}; the suites never import a runner themselves), a run-time skip that works in each, and the
 * fresh-instance and error-code helpers every spec uses.
 */
import assert from "node:assert/strict";
import type { SessionError, SessionIssueRule } from "../errors.js";

/** What the suites need from a test runner: `{ describe, it }` of node:test, vitest, jest or mocha. */
export interface TestApi {
  /** Groups tests under a name. */
  describe(name: string, body: () => void): unknown;
  /**
   * Declares one test. The suite's `body` takes no declared parameter (so jest and mocha treat it as
   * promise-returning) and reads the runner's test context from its arguments (node:test's `t`, vitest's
   * `context`) or from `this` (mocha) to skip at run time.
   */
  it(name: string, body: () => Promise<void>): unknown;
}

/** A running contract test: how it skips when the backend lacks a capability. */
export interface ContractTest {
  /**
   * Marks the test skipped with `reason`: through the runner's own `skip` when its test context has one
   * (node:test `t.skip(reason)`, vitest `context.skip(reason)`, mocha `this.skip()`), else by printing the reason
   * (jest). Callers return right after it; a runner whose skip throws (vitest, mocha) ends the test there.
   */
  skip(reason: string): void;
}

/** What a spec file declares its tests with: the injected runner, with a portable run-time skip. */
export interface Suite {
  describe(name: string, body: () => void): void;
  test(name: string, body: (t: ContractTest) => Promise<void> | void): void;
}

interface Skippable {
  skip(reason?: string): void;
}

function skippable(value: unknown): value is Skippable {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { skip?: unknown }).skip === "function"
  );
}

/** A {@link ContractTest} over whatever context the runner handed the test (or none). */
function contractTest(context: unknown, name: string): ContractTest {
  return {
    skip(reason: string): void {
      if (skippable(context)) {
        context.skip(reason);
        return;
      }
      console.info(`# SKIP ${name}: ${reason}`);
    },
  };
}

/** Checks the injected runner, then adapts it to the suites' {@link Suite}. */
export function suiteOf(api: TestApi): Suite {
  if (
    typeof api !== "object" ||
    api === null ||
    typeof api.describe !== "function" ||
    typeof api.it !== "function"
  ) {
    throw new TypeError(
      "the contract suites need a test runner's { describe, it } (node:test, vitest, jest)",
    );
  }
  return {
    describe(name, body) {
      api.describe(name, body);
    },
    test(name, body) {
      // A `function` (not an arrow) to see mocha's `this`; rest parameters keep `length` at 0 (see TestApi.it).
      api.it(name, async function (this: unknown, ...args: unknown[]): Promise<void> {
        const context = skippable(args[0]) ? args[0] : this;
        await body(contractTest(context, name));
      });
    },
  };
}

/** Throws a TypeError naming `caller` unless `target` has a name, `create()` and, if given, functions. */
export function checkTarget(target: unknown, caller: string): void {
  const fields = target as Partial<Record<"name" | "create" | "destroy" | "reopen", unknown>> | null;
  let need: string | undefined;
  if (typeof target !== "object" || fields === null) need = "a target object";
  else if (typeof fields.name !== "string" || fields.name === "") need = "a target with a name";
  else if (typeof fields.create !== "function") need = "a target with create()";
  else {
    for (const key of ["destroy", "reopen"] as const) {
      if (fields[key] !== undefined && typeof fields[key] !== "function") need = `${key} to be a function`;
    }
  }
  if (need) throw new TypeError(`${caller}() needs ${need}`);
}

/** Runs `body` with `instance` (fresh from the target's `create()`) and always disposes of it after: the
 * target's `destroy()` when it has one, else the instance's own `close()`. */
export async function disposing<T extends { close?(): unknown }, R>(
  target: { destroy?(instance: T): Promise<void> },
  instance: T,
  body: (instance: T) => Promise<R>,
): Promise<R> {
  try {
    return await body(instance);
  } finally {
    if (target.destroy) await target.destroy(instance);
    else await instance.close?.();
  }
}

/** Where a refused input broke its rule: the first issue's dotted `path` and, when given, its `rule`. */
export interface ExpectedIssue {
  path: string;
  rule?: SessionIssueRule;
}

/**
 * Asserts that `promise` rejects with a SessionError of `code` and, when `issue` is given, whose first issue is at
 * `issue.path` (and breaks `issue.rule`): what a program reads, never the message's wording.
 */
export async function rejectsWithCode(
  promise: Promise<unknown>,
  code: string,
  issue?: ExpectedIssue,
): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    const refusal = error as SessionError;
    assert.equal(refusal.name === "SessionError" || refusal.code !== undefined, true);
    assert.equal(refusal.code, code, `expected code ${code}, got ${(error as Error).message}`);
    if (issue) {
      assert.equal(
        refusal.issues?.[0]?.path,
        issue.path,
        `expected an issue at ${issue.path}: ${refusal.message}`,
      );
      if (issue.rule !== undefined) assert.equal(refusal.issues?.[0]?.rule, issue.rule, refusal.message);
    }
    return true;
  });
}
