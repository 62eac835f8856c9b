// Forgetting facts with their sources: every erasure path (erase, delete, eraseOwner, eraseAll, a retention sweep)
// removes every fact with a source in a removed session, whatever its scope, and the session's learn mark; a fact
// that a removed fact had superseded is superseded by the next fact of its chain that stays, else current again (the
// later word is gone). Skipped without facts or registry.
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

    test("a chain that loses its middle re-links past it; one that loses its end is current again", (t) =>
      withOwnedFacts(t, target, async (store) => {
        const alice = { owner: "alice" };
        await ownedSession(store, "r1", "alice", ["Alice lives in Rome", "Alice moved to Lima"]);
        await ownedSession(store, "r2", "alice", ["Alice moved to Oslo"]);
        await store.facts.add(alice, [
          fact("Alice lives in Rome.", [["r1", "r1-0"]], { id: "rome" }),
          fact("Alice moved to Oslo.", [["r2", "r2-0"]], { id: "oslo" }),
          fact("Alice moved to Lima.", [["r1", "r1-1"]], { id: "lima" }),
        ]);
        await store.facts.supersede(alice, "rome", "oslo");
        await store.facts.supersede(alice, "oslo", "lima");
        const state = async (id: string) => {
          const kept = await store.facts.get(alice, id);
          return kept && [kept.status, kept.supersededBy];
        };
        await SessionManager.create(store).erase("r2");
        assert.equal(await state("oslo"), null);
        assert.deepEqual(await state("rome"), ["superseded", "lima"], "Lima still came after Rome");
        await store.session("r1").deleteMessages(["r1-1"]);
        assert.deepEqual(await state("rome"), ["current", null], "nothing after Rome stays");
        // Several links of a chain removed at once: the next fact that stays, or none.
        await ownedSession(store, "r3", "alice", ["Alice was born in Nice", "Alice moved to Kyiv"]);
        await store.facts.add(alice, [
          fact("Alice was born in Nice.", [["r3", "r3-0"]], { id: "nice" }),
          fact("Alice lived in Oslo.", [["r1", "r1-0"]], { id: "oslo2" }),
          fact("Alice lived in Rome.", [["r1", "r1-0"]], { id: "rome2" }),
          fact("Alice moved to Kyiv.", [["r3", "r3-1"]], { id: "kyiv" }),
          fact("Alice likes Pisa.", [["r3", "r3-0"]], { id: "pisa" }),
          fact("Alice likes Bari.", [["r1", "r1-0"]], { id: "bari" }),
          fact("Alice likes Como.", [["r1", "r1-0"]], { id: "como" }),
        ]);
        for (const [id, by] of [
          ["nice", "oslo2"],
          ["oslo2", "rome2"],
          ["rome2", "kyiv"],
          ["pisa", "bari"],
          ["bari", "como"],
        ] as const) {
          assert.equal(await store.facts.supersede(alice, id, by), true);
        }
        await store.session("r1").deleteMessages(["r1-0"]);
        assert.deepEqual(await state("nice"), ["superseded", "kyiv"]);
        assert.deepEqual(await state("pisa"), ["current", null]);
        assert.deepEqual(await ids(store, alice), ["kyiv", "nice", "pisa"]);
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
