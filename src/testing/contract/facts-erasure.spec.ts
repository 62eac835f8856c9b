// Forgetting facts with their sources: every erasure path (erase, delete, eraseOwner, eraseAll, a retention sweep)
// removes every fact with a source in a removed session, whatever its scope, and the session's learn mark; a fact
// that a removed fact had superseded is current again (the later word is gone). Skipped without facts or registry.
import assert from "node:assert/strict";
import type { FactCapableStore } from "../../contract/facts.js";
import type { RegistryCapableStore } from "../../contract/registry.js";
import { SessionManager } from "../../manager/manager.js";
import type { Suite } from "../runner.js";
import { addAliceFacts, fact, ownedSession, withOwnedFacts } from "./facts-harness.js";
import type { ContractTarget } from "./harness.js";

type Store = FactCapableStore & RegistryCapableStore;
const ALL = { status: ["current", "superseded", "invalidated"] as const };

/** Alice's sessions a1 and a2, Bob's b1, each with facts and a learn mark. */
async function seed(store: Store): Promise<void> {
  await ownedSession(store, "a1", "alice", ["Alice moved to Boston", "She likes tea"]);
  await ownedSession(store, "a2", "alice", ["Alice lives in Paris", "and has a dog"]);
  await ownedSession(store, "b1", "bob", ["Bob likes chess"]);
  await addAliceFacts(store);
  await store.facts.add({ sessionId: "a1" }, [fact("Tea, in a1.", [["a1", "a1-1"]], { id: "a1-own" })]);
  await store.facts.add({ owner: "bob" }, [fact("Bob likes chess.", [["b1", "b1-0"]], { id: "chess" })]);
  for (const id of ["a1", "a2", "b1"]) await store.facts.claim(id, "learner", 1, 2);
}

async function ids(store: Store, scope: { owner: string } | { sessionId: string }): Promise<string[]> {
  return (await store.facts.list(scope, ALL)).facts.map((f) => f.id).sort();
}

/** The facts' erasure rule on every erasure path. */
export function factsErasureSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("facts: forgotten with their sources", () => {
    test("erasing a session removes every fact with a source in it and its mark; what it superseded is current", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await seed(store);
        const receipt = await SessionManager.create(store).erase("a1");
        assert.equal(receipt.facts, 3, "the receipt counts the facts removed (boston, both, a1-own)");
        assert.deepEqual(await ids(store, { owner: "alice" }), ["dog", "paris"]);
        assert.deepEqual(await ids(store, { sessionId: "a1" }), []);
        const paris = await store.facts.get({ owner: "alice" }, "paris");
        assert.deepEqual([paris?.status, paris?.supersededBy], ["current", null]);
        assert.deepEqual(
          (await store.facts.search({ owner: "alice" }, "Boston tea")).map((h) => h.fact.id),
          [],
          "no erased fact is found by search",
        );
        assert.equal(await store.facts.mark("a1"), null);
        assert.equal((await store.facts.mark("a2"))?.holder, "learner");
        assert.deepEqual(await ids(store, { owner: "bob" }), ["chess"]);
      }));

    test("deleting a session removes its facts and its mark the same way", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await seed(store);
        assert.equal(await SessionManager.create(store).delete("a2"), true);
        assert.deepEqual(await ids(store, { owner: "alice" }), ["boston"]);
        assert.equal(await store.facts.mark("a2"), null);
        assert.deepEqual(await ids(store, { sessionId: "a1" }), ["a1-own"]);
      }));

    test("eraseOwner, an owner view's eraseAll and a retention sweep take the owners' facts and marks", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await seed(store);
        const manager = SessionManager.create(store);
        await manager.eraseOwner("alice");
        assert.deepEqual(await ids(store, { owner: "alice" }), []);
        assert.deepEqual(await ids(store, { sessionId: "a1" }), []);
        assert.equal(await store.facts.mark("a1"), null);
        assert.equal(await store.facts.mark("a2"), null);
        assert.deepEqual(await ids(store, { owner: "bob" }), ["chess"]);
        await manager.forOwner("bob").eraseAll();
        assert.deepEqual(await ids(store, { owner: "bob" }), []);
        assert.equal(await store.facts.mark("b1"), null);
        await ownedSession(store, "c1", "carol", ["Carol sings"]);
        await store.facts.add({ owner: "carol" }, [fact("Carol sings.", [["c1", "c1-0"]], { id: "sings" })]);
        const report = await manager.sweep({ maxAgeMs: 1 }, { now: new Date(Date.now() + 3_600_000) });
        assert.deepEqual(report.erased.sessionIds, ["c1"]);
        assert.deepEqual(await ids(store, { owner: "carol" }), []);
      }));
  });
}
