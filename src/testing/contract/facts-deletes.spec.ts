// Forgetting facts with deleted messages: deleting messages (deleteMessages, clearMessages, an agent step's removal)
// drops them from every fact's sources, whatever its scope; a fact left without sources goes, and a fact it had
// superseded is re-linked or current again (as in an erasure). The session's learn mark stays. Skipped without facts
// or registry. `facts.delete` removes one fact outright (its row, sources, index and vector), where `invalidate` keeps it.
import assert from "node:assert/strict";
import type { FactCapableStore, FactScope } from "../../contract/facts.js";
import type { RegistryCapableStore } from "../../contract/registry.js";
import { SessionManager } from "../../manager/manager.js";
import type { Suite } from "../runner.js";
import { addAliceFacts, exportedFacts, fact, ownedSession, withOwnedFacts } from "./facts-harness.js";
import type { ContractTarget } from "./harness.js";

type Store = FactCapableStore & RegistryCapableStore;
const ALL = { status: ["current", "superseded", "invalidated"] as const };
const alice = { owner: "alice" };

/** Alice's sessions a1 and a2 with facts, one of them superseded, and a learn mark on a1. */
async function seed(store: Store): Promise<void> {
  await ownedSession(store, "a1", "alice", ["Alice moved to Boston", "She likes tea", "and green tea"]);
  await ownedSession(store, "a2", "alice", ["Alice lives in Paris", "and has a dog"]);
  await addAliceFacts(store);
  await store.facts.add({ sessionId: "a1" }, [
    fact(
      "Tea, in a1.",
      [
        ["a1", "a1-1"],
        ["a1", "a1-2"],
      ],
      { id: "tea" },
    ),
  ]);
  await store.facts.claim("a1", "learner", 1, 2);
}

async function ids(store: Store, scope: FactScope): Promise<string[]> {
  return (await store.facts.list(scope, ALL)).facts.map((f) => f.id).sort();
}

async function sourcesOf(store: Store, scope: FactScope, id: string): Promise<string[] | undefined> {
  return (await store.facts.get(scope, id))?.sources.map((s) => `${s.sessionId}/${s.messageId}`);
}

/** The facts' rule for deleted messages, on every way a message is deleted. */
export function factsDeletesSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("facts: forgotten with deleted messages", () => {
    test("deleting a message drops it from the facts' sources; a fact left without any goes", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await seed(store);
        await store.session("a2").deleteMessages(["a2-1", "no-such-message"]);
        assert.deepEqual(await ids(store, alice), ["boston", "both", "paris"]);
        assert.deepEqual(await sourcesOf(store, alice, "both"), ["a1/a1-1"], "the other source is kept");
        assert.deepEqual(
          (await store.facts.search(alice, "dog")).map((h) => h.fact.id),
          ["both"],
          "the deleted fact is not found by search",
        );
        assert.deepEqual(await ids(store, { sessionId: "a1" }), ["tea"], "another session's facts stay");
        assert.deepEqual(
          (await store.facts.list(alice, { sourcesIn: ["a2-1"] })).facts,
          [],
          "no fact names the deleted message",
        );
      }));

    test("a fact whose every source is deleted goes, and what it had superseded is current again", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await seed(store);
        const manager = SessionManager.create(store);
        await manager.deleteMessages("a1", ["a1-0"]);
        assert.equal(await store.facts.get(alice, "boston"), null);
        const paris = await store.facts.get(alice, "paris");
        assert.deepEqual([paris?.status, paris?.supersededBy], ["current", null]);
        // Two sources deleted one at a time: the fact goes with the second.
        await store.session("a1").deleteMessages(["a1-2"]);
        assert.deepEqual(await sourcesOf(store, { sessionId: "a1" }, "tea"), ["a1/a1-1"]);
        await store.session("a1").deleteMessages(["a1-1"]);
        assert.deepEqual(await ids(store, { sessionId: "a1" }), []);
        assert.deepEqual(await sourcesOf(store, alice, "both"), ["a2/a2-1"]);
        assert.equal((await store.facts.mark("a1"))?.holder, "learner", "the learn mark stays");
      }));

    test("clearing a session drops every source in it; facts with sources elsewhere stay", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await seed(store);
        await store.session("a1").clearMessages();
        assert.deepEqual(await ids(store, { sessionId: "a1" }), []);
        assert.deepEqual(await ids(store, alice), ["both", "dog", "paris"]);
        assert.deepEqual(await sourcesOf(store, alice, "both"), ["a2/a2-1"]);
        assert.equal((await store.facts.get(alice, "paris"))?.status, "current");
        assert.equal((await store.facts.mark("a1"))?.holder, "learner", "the learn mark stays");
        // Messages written after the clear are sources again, and a later delete finds them.
        await store.session("a1").appendMessage({
          id: "a1-9",
          role: "user",
          parts: [{ type: "text", text: "Alice is back" }],
        });
        await store.facts.add(alice, [fact("Alice is back.", [["a1", "a1-9"]], { id: "back" })]);
        await store.session("a1").deleteMessages(["a1-9"]);
        assert.equal(await store.facts.get(alice, "back"), null);
      }));

    test("facts.delete removes a fact whatever its status, unlike invalidate, which keeps its text", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await seed(store);
        assert.equal(await store.facts.invalidate(alice, "dog"), true);
        assert.equal(
          (await store.facts.get(alice, "dog"))?.text,
          "Alice has a dog.",
          "invalidated: text kept",
        );
        assert.equal(await store.facts.delete(alice, "dog"), true);
        assert.equal(await store.facts.get(alice, "dog"), null);
        assert.equal(await store.facts.delete(alice, "dog"), false, "gone already");
        // The current fact that superseded another goes; the one it replaced is current again.
        assert.equal(await store.facts.delete(alice, "boston"), true);
        const paris = await store.facts.get(alice, "paris");
        assert.deepEqual([paris?.status, paris?.supersededBy], ["current", null]);
        assert.deepEqual(await ids(store, alice), ["both", "paris"]);
        assert.deepEqual(
          (await store.facts.search(alice, "Boston")).map((h) => h.fact.id),
          [],
          "not found by search",
        );
        assert.deepEqual(
          (await store.facts.search(alice, "dog", ALL)).map((h) => h.fact.id),
          ["both"],
        );
        assert.deepEqual((await exportedFacts(store)).map((f) => f.id).sort(), ["both", "paris", "tea"]);
        assert.deepEqual(
          (await store.facts.list(alice, { sourcesIn: ["a1-0"] })).facts,
          [],
          "its sources went with it",
        );
        // Another scope's id is not found there, and stays.
        assert.equal(await store.facts.delete(alice, "tea"), false);
        assert.deepEqual(await ids(store, { sessionId: "a1" }), ["tea"]);
        // A message delete after it finds nothing to forget, and keeps the other facts' sources.
        await store.session("a1").deleteMessages(["a1-0"]);
        assert.deepEqual(await ids(store, alice), ["both", "paris"]);
      }));
  });
}
