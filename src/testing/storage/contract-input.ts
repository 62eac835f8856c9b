import assert from "node:assert/strict";
import type { SessionState, SessionStorage } from "../../agent/types.js";
import { rejectsWithCode as rejectsCode, type Suite } from "../runner.js";
import { sampleState } from "./fixtures.js";

/** A state that is wrong in one way, and the code every storage answers it with. */
const BAD_STATES: [string, (state: SessionState) => unknown, string][] = [
  ["metadata a list", (s) => ({ ...s, metadata: [1, 2] }), "INVALID_ARGUMENT"],
  ["createdAt NaN", (s) => ({ ...s, createdAt: Number.NaN }), "INVALID_ARGUMENT"],
  ["updatedAt a string", (s) => ({ ...s, updatedAt: "yesterday" }), "INVALID_ARGUMENT"],
  ["parentId a number", (s) => ({ ...s, parentId: 5 }), "INVALID_ARGUMENT"],
  ["usage null", (s) => ({ ...s, usage: null }), "INVALID_ARGUMENT"],
  ["a ledger entry null", (s) => ({ ...s, usage: { ...s.usage, entries: [null] } }), "INVALID_ARGUMENT"],
  ["messages a string", (s) => ({ ...s, messages: "nope" }), "INVALID_MESSAGE"],
  ["a message without id", (s) => ({ ...s, messages: [{ role: "user", content: "x" }] }), "INVALID_MESSAGE"],
  [
    "two messages with one id",
    (s) => ({ ...s, messages: [s.messages[0], s.messages[0]] }),
    "INVALID_MESSAGE",
  ],
  ["a state that is null", () => null, "INVALID_ARGUMENT"],
];

async function refuses(promise: Promise<unknown>, code: string, what: string): Promise<void> {
  try {
    await rejectsCode(promise, code);
  } catch (error) {
    throw new Error(`${what}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * The contract's input tests: `save()` and `create()` check the whole state before writing, with the same code on
 * every backend, and a refused write leaves the stored session as it was (no half-replaced state, no stray id).
 */
export function runStateInputContract(
  it: Suite["test"],
  withStorage: (body: (storage: SessionStorage) => Promise<void>) => Promise<void>,
): void {
  it("save and create refuse a bad state with INVALID_ARGUMENT / INVALID_MESSAGE and store nothing", () =>
    withStorage(async (storage) => {
      for (const [what, spoil, code] of BAD_STATES) {
        const state = sampleState();
        await refuses(storage.save(spoil(state) as SessionState), code, `save: ${what}`);
        if (storage.create)
          await refuses(storage.create(spoil(state) as SessionState), code, `create: ${what}`);
        assert.equal(await storage.load(state.id), undefined, what);
      }
      assert.deepEqual(await storage.list(), []);
    }));

  it("a refused save leaves the stored state whole; a refused create leaves the id free", () =>
    withStorage(async (storage) => {
      const state = sampleState();
      await storage.save(state);
      const before = await storage.load(state.id);
      const shorter = { ...state, messages: state.messages.slice(0, 1), createdAt: Number.NaN };
      await rejectsCode(storage.save(shorter), "INVALID_ARGUMENT");
      assert.deepEqual(await storage.load(state.id), before);
      if (!storage.create) return;
      const fresh = sampleState();
      await rejectsCode(storage.create({ ...fresh, createdAt: Number.NaN }), "INVALID_ARGUMENT");
      assert.equal(await storage.load(fresh.id), undefined);
      await storage.create(fresh);
      assert.deepEqual([...(await storage.list())].sort(), [state.id, fresh.id].sort());
    }));
}
