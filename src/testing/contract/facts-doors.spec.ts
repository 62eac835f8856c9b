// The fact doors of a SessionManager (docs/FACTS.md, "Doors"): an owner view reads, forgets and learns its owner's
// facts only; the manager learns a session or an owner's sessions with progress, and its background learner stops
// with it. Extractors are plain functions (no model). Skipped on a store without facts or a registry.
import assert from "node:assert/strict";
import type { FactCapableStore } from "../../contract/facts.js";
import { hasFeed } from "../../contract/feed.js";
import type { RegistryCapableStore } from "../../contract/registry.js";
import type { ExtractedFact, ExtractInput } from "../../facts/types.js";
import { SessionManager } from "../../manager/manager.js";
import type { Suite } from "../runner.js";
import { fact, ownedSession, withOwnedFacts } from "./facts-harness.js";
import { type ContractTarget, rejectsWithCode } from "./harness.js";

type Store = FactCapableStore & RegistryCapableStore;

/** One fact per user message starting "I " ("I live in Lyon" → "The user says: I live in Lyon"). */
async function saying(input: ExtractInput): Promise<ExtractedFact[]> {
  return input.messages
    .filter((m) => m.text.startsWith("I "))
    .map((m) => ({ text: `The user says: ${m.text}`, about: "user", sources: [m.id] }));
}

async function twoOwners(store: Store): Promise<void> {
  await ownedSession(store, "a1", "alice", ["I live in Lyon", "I like tea"]);
  await ownedSession(store, "a2", "alice", ["I play chess"]);
  await ownedSession(store, "b1", "bob", ["I live in Oslo"]);
  await ownedSession(store, "u1", null, ["I have no owner"]);
}

const texts = (facts: readonly { text: string }[]) => facts.map((f) => f.text).sort();

/** Owner views' facts, the manager's learn, its background learner. */
export function factsDoorsSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("facts doors: the manager and its owner views", () => {
    test("an owner view lists, searches, gets and forgets its owner's facts only", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await twoOwners(store);
        const [lyon] = await store.facts.add({ owner: "alice" }, [
          fact("Alice lives in Lyon.", [["a1", "a1-0"]]),
        ]);
        const [oslo] = await store.facts.add({ owner: "bob" }, [
          fact("Bob lives in Oslo.", [["b1", "b1-0"]]),
        ]);
        const [kept] = await store.facts.add({ sessionId: "a2" }, [
          fact("Kept to a2: lives.", [["a2", "a2-0"]]),
        ]);
        await store.facts.add({ sessionId: "u1" }, [fact("Unowned lives here.", [["u1", "u1-0"]])]);
        const manager = SessionManager.create(store);
        const alice = manager.forOwner("alice");
        const bob = manager.forOwner("bob");

        assert.deepEqual(texts((await alice.facts.list()).facts), ["Alice lives in Lyon."]);
        assert.deepEqual(texts((await bob.facts.list()).facts), ["Bob lives in Oslo."]);
        assert.deepEqual(texts((await alice.facts.search("lives")).map((h) => h.fact)), [
          "Alice lives in Lyon.",
        ]);
        assert.deepEqual(texts((await alice.facts.list({ sessionId: "a2" })).facts), ["Kept to a2: lives."]);
        assert.equal((await alice.facts.get(kept!.id, { sessionId: "a2" }))?.text, "Kept to a2: lives.");

        // Another owner's fact or session, and an unowned session, are unknown to the view: never read or changed.
        assert.equal(await alice.facts.get(oslo!.id), null);
        assert.equal(await alice.facts.forget(oslo!.id), false);
        assert.equal((await store.facts.get({ owner: "bob" }, oslo!.id))?.status, "current");
        for (const sessionId of ["b1", "u1", "nobody"]) {
          await rejectsWithCode(alice.facts.list({ sessionId }), "NOT_FOUND");
          await rejectsWithCode(alice.facts.search("lives", { sessionId }), "NOT_FOUND");
          await rejectsWithCode(alice.facts.forget("x", { sessionId }), "NOT_FOUND");
        }
        assert.equal((await bob.facts.search("Alice")).length, 0);

        // Forget withdraws the fact, keeping it in the history; a second forget finds nothing current.
        assert.equal(await alice.facts.forget(lyon!.id), true);
        assert.equal(await alice.facts.forget(lyon!.id), false);
        assert.deepEqual((await alice.facts.list()).facts, []);
        assert.equal((await alice.facts.get(lyon!.id))?.status, "invalidated");
        assert.deepEqual(texts((await alice.facts.list({ status: ["invalidated"] })).facts), [
          "Alice lives in Lyon.",
        ]);
        assert.equal((await alice.facts.search("Lyon")).length, 0);
        // Delete removes it, text and all; another owner's fact is unknown to it too.
        assert.equal(await alice.facts.delete(oslo!.id), false);
        assert.equal((await store.facts.get({ owner: "bob" }, oslo!.id))?.status, "current");
        assert.equal(await alice.facts.delete(lyon!.id), true);
        assert.equal(await alice.facts.get(lyon!.id), null);
        assert.deepEqual((await alice.facts.list({ status: ["invalidated"] })).facts, []);
        await manager.close();
      }));

    test("the manager learns one session or one owner's sessions, with progress", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await twoOwners(store);
        const manager = SessionManager.create(store);
        const progress: string[] = [];
        const one = await manager.learn("a2", {
          extractor: saying,
          onProgress: ({ sessionId }) => progress.push(sessionId),
        });
        assert.equal(one.sessions, 1);
        assert.equal(one.added, 1);
        assert.deepEqual(progress, ["a2"]);
        const all = await manager.learn({ owner: "alice" }, { extractor: saying });
        assert.equal(all.sessions, 2);
        assert.equal(all.added, 2, "a2 was learned already: only a1's two facts are new");
        assert.deepEqual(texts((await manager.forOwner("alice").facts.list()).facts), [
          "The user says: I like tea",
          "The user says: I live in Lyon",
          "The user says: I play chess",
        ]);
        assert.deepEqual(
          (await manager.forOwner("bob").facts.list()).facts,
          [],
          "bob's sessions were not learned",
        );
        await manager.learn("u1", { extractor: saying });
        assert.deepEqual(texts((await store.facts.list({ sessionId: "u1" })).facts), [
          "The user says: I have no owner",
        ]);

        await rejectsWithCode(manager.learn("nobody", { extractor: saying }), "NOT_FOUND");
        await rejectsWithCode(
          manager.learn("a1", { extractor: saying, sessionIds: ["b1"] } as never),
          "INVALID_ARGUMENT",
          { path: "sessionIds" },
        );
        await rejectsWithCode(manager.learn(42 as never, { extractor: saying }), "INVALID_ARGUMENT");
        // A model id string is the AI SDK's to resolve; an empty one, or a value of another kind, is refused.
        await rejectsWithCode(manager.learn("a1", { extractor: "" }), "INVALID_ARGUMENT");
        await rejectsWithCode(manager.learn("a1", { extractor: 42 } as never), "INVALID_ARGUMENT");
        await manager.close();
      }));

    test("an owner view learns its owner's sessions only", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await twoOwners(store);
        const manager = SessionManager.create(store);
        const bob = manager.forOwner("bob");
        await rejectsWithCode(bob.facts.learn({ extractor: saying, sessionIds: ["b1", "a1"] }), "NOT_FOUND");
        assert.deepEqual((await bob.facts.list()).facts, [], "nothing learned before the check");
        await rejectsWithCode(
          bob.facts.learn({ extractor: saying, owner: "alice" } as never),
          "INVALID_ARGUMENT",
          { path: "owner" },
        );
        const report = await bob.facts.learn({ extractor: saying });
        assert.equal(report.sessions, 1);
        assert.deepEqual(texts((await bob.facts.list()).facts), ["The user says: I live in Oslo"]);
        assert.deepEqual((await manager.forOwner("alice").facts.list()).facts, []);
        assert.deepEqual((await store.facts.list({ sessionId: "u1" })).facts, []);
        await manager.close();
      }));

    test("the manager's background learner learns new messages and stops with the manager", (t) =>
      withOwnedFacts(t, target, async (store) => {
        if (!hasFeed(store)) return t.skip("no change feed");
        const manager = SessionManager.create(store);
        const learner = manager.startLearning({ extractor: saying, quietMs: 0 });
        const alice = manager.forOwner("alice");
        await alice.create("chat", { id: "a1" });
        await manager.append("a1", {
          id: "m1",
          role: "user",
          parts: [{ type: "text", text: "I live in Lyon" }],
        });
        await learner.flush();
        assert.deepEqual(texts((await alice.facts.list()).facts), ["The user says: I live in Lyon"]);
        await manager.close();
        const mark = await store.facts.mark("a1");
        await manager.append("a1", { id: "m2", role: "user", parts: [{ type: "text", text: "I like tea" }] });
        await learner.flush();
        assert.deepEqual(await store.facts.mark("a1"), mark, "a closed learner learns nothing more");
        assert.equal((await alice.facts.list()).facts.length, 1);
      }));
  });
}
