// Facts moved between stores: an export reads every fact (scope, sources, status, what superseded it, producer,
// times) page by page, and an import into a store holding the sessions writes them as they were, skipping ids its
// scope holds; a fact naming a message the store does not hold, or a source outside its scope, is refused with
// nothing written. Skipped without facts or registry.
import assert from "node:assert/strict";
import type { Fact, FactCapableStore } from "../../contract/facts.js";
import type { RegistryCapableStore } from "../../contract/registry.js";
import { importFactStream } from "../../store/transfer/facts.js";
import { rejectsWithCode, type Suite } from "../runner.js";
import { exportedFacts, fact, factStream, ownedSession, withOwnedFacts } from "./facts-harness.js";
import type { ContractTarget } from "./harness.js";

type Store = FactCapableStore & RegistryCapableStore;

/** Alice's a1, the ownerless s1 and Bob's b1, with facts in four states. */
async function sessions(store: Store): Promise<void> {
  await ownedSession(store, "a1", "alice", ["Alice moved to Boston", "She lived in Paris", "She likes tea"]);
  await ownedSession(store, "s1", null, ["Nobody's note"]);
  await ownedSession(store, "b1", "bob", ["Bob likes chess"]);
}

async function seed(store: Store): Promise<void> {
  await sessions(store);
  const alice = { owner: "alice" };
  await store.facts.add(alice, [
    fact("Alice lives in Paris.", [["a1", "a1-1"]], { id: "paris", about: "Alice" }),
    fact("Alice moved to Boston.", [["a1", "a1-0"]], { id: "boston", about: "Alice" }),
    fact(
      "Alice likes tea.",
      [
        ["a1", "a1-2"],
        ["a1", "a1-0"],
      ],
      { id: "tea", producer: "model:test/one" },
    ),
  ]);
  await store.facts.supersede(alice, "paris", "boston");
  await store.facts.invalidate(alice, "tea");
  await store.facts.add({ sessionId: "s1" }, [fact("A note.", [["s1", "s1-0"]], { id: "note" })]);
  await store.facts.add({ owner: "bob" }, [fact("Bob likes chess.", [["b1", "b1-0"]], { id: "paris" })]);
}

/** Export and import of facts on every backend. */
export function factsTransferSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("facts: export and import", () => {
    test("an export reads every fact with its state; an import into another store writes them as they were", (t) =>
      withOwnedFacts(t, target, async (from) => {
        await seed(from);
        const facts = await exportedFacts(from);
        assert.equal(facts.length, 5);
        const key = (f: Fact) => `${f.owner ?? ""}/${f.sessionId ?? ""}/${f.id}`;
        // By scope key, then store order.
        assert.deepEqual(facts.map(key), [
          "alice//paris",
          "alice//boston",
          "alice//tea",
          "bob//paris",
          "/s1/note",
        ]);
        const paris = facts[0]!;
        assert.deepEqual([paris.status, paris.supersededBy, paris.about], ["superseded", "boston", "Alice"]);
        assert.deepEqual([facts[2]!.status, facts[2]!.producer], ["invalidated", "model:test/one"]);
        const page = await from.facts.exportPage({ limit: 2 });
        assert.equal(page.facts.length, 2);
        const rest = await from.facts.exportPage({ cursor: page.next, limit: 100 });
        assert.deepEqual([...page.facts, ...rest.facts].map(key), facts.map(key), "pages follow each other");
        assert.equal(rest.next, null);
        await withOwnedFacts(t, target, async (to) => {
          await sessions(to);
          assert.deepEqual(await importFactStream(to.facts, factStream(facts)), { inserted: 5, skipped: 0 });
          const byKey = (list: Fact[]) => [...list].sort((a, b) => key(a).localeCompare(key(b)));
          assert.deepEqual(
            byKey(await exportedFacts(to)),
            byKey(facts),
            "scope, sources, state, producer and times",
          );
          assert.deepEqual(await importFactStream(to.facts, factStream(facts)), { inserted: 0, skipped: 5 });
          const found = await to.facts.search({ owner: "alice" }, "Boston");
          assert.deepEqual(
            found.map((h) => h.fact.id),
            ["boston"],
          );
        });
      }));

    test("an import refuses a source the store does not hold or outside the scope, writing nothing", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await sessions(store);
        const base: Fact = {
          ...fact("Alice likes tea.", [["a1", "a1-2"]]),
          id: "tea",
          about: null,
          owner: "alice",
          sessionId: null,
          status: "current",
          supersededBy: null,
          createdAt: 1_700_000_000_000,
          sources: [{ sessionId: "a1", messageId: "a1-2" }],
        };
        const missing = { ...base, id: "gone", sources: [{ sessionId: "a1", messageId: "never-stored" }] };
        await rejectsWithCode(store.facts.importFacts([base, missing]), "INVALID_ARGUMENT");
        const foreign = { ...base, id: "foreign", sources: [{ sessionId: "b1", messageId: "b1-0" }] };
        await rejectsWithCode(store.facts.importFacts([base, foreign]), "INVALID_ARGUMENT");
        // A superseded fact names what superseded it; a fact has one scope.
        await rejectsWithCode(
          store.facts.importFacts([{ ...base, status: "superseded" }]),
          "INVALID_ARGUMENT",
        );
        await rejectsWithCode(store.facts.importFacts([{ ...base, sessionId: "a1" }]), "INVALID_ARGUMENT");
        assert.equal(await store.facts.isEmpty(), true, "nothing was written");
        await rejectsWithCode(store.facts.exportPage({ cursor: "12" }), "INVALID_ARGUMENT");
      }));
  });
}
