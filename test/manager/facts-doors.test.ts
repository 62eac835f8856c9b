// The manager's fact doors on a store without facts: UNSUPPORTED at each door, never a crash or a silent no-op.
// (What the doors do on every backend is the contract's facts-doors spec.)
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SessionManager } from "../../src/manager/manager.js";
import { MemoryStore } from "../../src/memory/store.js";

/** The store seen without its fact store (every other member bound to it). */
function withoutFacts<T extends object>(store: T): T {
  return new Proxy(store, {
    get: (target, key) => {
      if (key === "facts") return undefined;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("SessionManager fact doors without facts", () => {
  it("answers UNSUPPORTED at every door", async () => {
    const manager = SessionManager.create(withoutFacts(new MemoryStore()));
    const extractor = async () => [];
    const alice = manager.forOwner("alice");
    await alice.create("chat", { id: "a1" });
    await assert.rejects(alice.facts.list(), { code: "UNSUPPORTED" });
    await assert.rejects(alice.facts.search("x"), { code: "UNSUPPORTED" });
    await assert.rejects(alice.facts.forget("x"), { code: "UNSUPPORTED" });
    await assert.rejects(alice.facts.learn({ extractor }), { code: "UNSUPPORTED" });
    await assert.rejects(manager.learn("a1", { extractor }), { code: "UNSUPPORTED" });
    assert.throws(() => manager.startLearning({ extractor }), { code: "UNSUPPORTED" });
    await manager.close();
  });
});
