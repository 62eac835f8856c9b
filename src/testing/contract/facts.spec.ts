// Facts (`store.facts`, docs/FACTS.md): a fact is stored in one scope with its sources and read back whole; scopes
// never see each other's facts; supersession and invalidation keep history; lists page newest first; search ranks
// with the library's query language. Skipped on a store without facts.
import assert from "node:assert/strict";
import type { Suite } from "../runner.js";
import { fact, ownedSession, storedMessages, withFacts, withOwnedFacts } from "./facts-harness.js";
import { type ContractTarget, msg, rejectsWithCode } from "./harness.js";

/** The fact store's writes, reads, scopes, status rules, pages and search. */
export function factsSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("facts", () => {
    test("a fact is stored in its scope with its sources and read back whole", (t) =>
      withFacts(t, target, async (store) => {
        await store.session("s").appendMessage(msg("m1", "I moved to Boston in May"));
        const [added] = await store.facts.add({ sessionId: "s" }, [
          fact("The user moved to Boston in May.", [["s", "m1"]], { about: "user" }),
        ]);
        assert.ok(added && typeof added.id === "string" && added.id.length > 0, "an id is generated");
        assert.equal(added.status, "current");
        assert.equal(added.supersededBy, null);
        assert.equal(added.owner, null);
        assert.equal(added.sessionId, "s");
        assert.equal(typeof added.createdAt, "number");
        assert.deepEqual(added.sources, [{ sessionId: "s", messageId: "m1" }]);
        assert.deepEqual(await store.facts.get({ sessionId: "s" }, added.id), added);
        const [given] = await store.facts.add({ sessionId: "s" }, [
          fact("No one said whom.", [["s", "m1"]], { id: "f-given" }),
        ]);
        assert.equal(given?.id, "f-given");
        assert.equal(given?.about, null);
        assert.equal(await store.facts.get({ sessionId: "s" }, "never"), null);
        assert.deepEqual(await store.facts.add({ sessionId: "s" }, []), []);
      }));

    test("bad facts are refused before anything is stored: sources required, text, scope, ids", (t) =>
      withFacts(t, target, async (store) => {
        const s = { sessionId: "s" };
        await storedMessages(store, "s", ["m"]);
        await rejectsWithCode(store.facts.add(s, [fact("x", [])]), "INVALID_ARGUMENT", {
          path: "facts.0.sources",
        });
        const { sources: _, ...sourceless } = fact("x", [["s", "m"]]);
        await rejectsWithCode(store.facts.add(s, [sourceless as never]), "INVALID_ARGUMENT", {
          path: "facts.0.sources",
        });
        await rejectsWithCode(store.facts.add(s, [fact("  ", [["s", "m"]])]), "INVALID_ARGUMENT", {
          path: "facts.0.text",
        });
        await rejectsWithCode(
          store.facts.add(s, [fact("ok", [["s", "m"]]), fact("from elsewhere", [["other", "m"]])]),
          "INVALID_ARGUMENT",
          { path: "facts.1.sources.0.sessionId" },
        );
        await rejectsWithCode(store.facts.add({} as never, [fact("x", [["s", "m"]])]), "INVALID_ARGUMENT");
        await rejectsWithCode(
          store.facts.add({ owner: "o", sessionId: "s" } as never, [fact("x", [["s", "m"]])]),
          "INVALID_ARGUMENT",
        );
        await rejectsWithCode(
          store.facts.add(s, [fact("x", [["s", "m"]], { observedAt: Number.NaN })]),
          "INVALID_ARGUMENT",
          { path: "facts.0.observedAt" },
        );
        await rejectsWithCode(
          store.facts.add(s, [fact("x".repeat(5000), [["s", "m"]])]),
          "INVALID_ARGUMENT",
          { path: "facts.0.text", rule: "too_long" },
        );
        assert.deepEqual((await store.facts.list(s)).facts, [], "a refused add stores none of its facts");
        await store.facts.add(s, [fact("one", [["s", "m"]], { id: "f" })]);
        await rejectsWithCode(store.facts.add(s, [fact("two", [["s", "m"]], { id: "f" })]), "CONFLICT");
        assert.equal((await store.facts.get(s, "f"))?.text, "one");
      }));

    test("an owner's facts are never read from another owner or a session scope; a session's not from another", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await ownedSession(store, "a1", "alice", ["Alice likes sailing"]);
        await ownedSession(store, "b1", "bob", ["Bob likes sailing"]);
        const [alices] = await store.facts.add({ owner: "alice" }, [
          fact("Alice likes sailing.", [["a1", "a1-0"]]),
        ]);
        const [sessions] = await store.facts.add({ sessionId: "a1" }, [
          fact("Sailing on Sundays.", [["a1", "a1-0"]]),
        ]);
        await rejectsWithCode(
          store.facts.add({ owner: "alice" }, [fact("Bob's, not hers.", [["b1", "b1-0"]])]),
          "INVALID_ARGUMENT",
          { path: "facts.0.sources.0.sessionId" },
        );
        assert.ok(alices && sessions);
        for (const scope of [{ owner: "bob" }, { sessionId: "a1" }, { sessionId: "b1" }]) {
          assert.equal(await store.facts.get(scope, alices.id), null);
          assert.deepEqual(await store.facts.search(scope, "Alice"), []);
          assert.equal(await store.facts.invalidate(scope, alices.id), false);
        }
        assert.deepEqual((await store.facts.list({ owner: "bob" })).facts, []);
        assert.deepEqual((await store.facts.list({ sessionId: "b1" })).facts, []);
        assert.equal(await store.facts.get({ owner: "alice" }, sessions.id), null);
        assert.deepEqual(
          (await store.facts.list({ sessionId: "a1" })).facts.map((f) => f.id),
          [sessions.id],
        );
        assert.deepEqual(
          (await store.facts.search({ owner: "alice" }, "sailing")).map((h) => h.fact.id),
          [alices.id],
        );
        assert.equal((await store.facts.get({ owner: "alice" }, alices.id))?.status, "current");
      }));

    test("supersede and invalidate move a current fact only, and keep it for the history", (t) =>
      withFacts(t, target, async (store) => {
        const s = { sessionId: "s" };
        await storedMessages(store, "s", ["m1", "m2", "m3"]);
        await store.facts.add(s, [
          fact("Lives in Paris.", [["s", "m1"]], { id: "old" }),
          fact("Lives in Boston.", [["s", "m2"]], { id: "new" }),
          fact("Has a cat.", [["s", "m3"]], { id: "cat" }),
        ]);
        assert.equal(await store.facts.supersede(s, "old", "new"), true);
        const old = await store.facts.get(s, "old");
        assert.deepEqual(
          [old?.status, old?.supersededBy, old?.text],
          ["superseded", "new", "Lives in Paris."],
        );
        assert.equal(await store.facts.supersede(s, "old", "cat"), false, "no longer current");
        assert.equal(await store.facts.invalidate(s, "old"), false);
        assert.equal(await store.facts.invalidate(s, "cat"), true);
        assert.equal((await store.facts.get(s, "cat"))?.status, "invalidated");
        assert.equal(await store.facts.supersede(s, "cat", "new"), false);
        await rejectsWithCode(store.facts.supersede(s, "new", "never"), "NOT_FOUND");
        await rejectsWithCode(store.facts.supersede(s, "new", "new"), "INVALID_ARGUMENT", { path: "by" });
        assert.equal(await store.facts.invalidate(s, "never"), false);
        assert.deepEqual(
          (await store.facts.list(s)).facts.map((f) => f.id),
          ["new"],
          "a list reads current facts by default",
        );
        const all = await store.facts.list(s, { status: ["current", "superseded", "invalidated"] });
        assert.deepEqual(
          all.facts.map((f) => f.id),
          ["cat", "new", "old"],
        );
        assert.deepEqual(
          (await store.facts.list(s, { status: ["superseded"] })).facts.map((f) => f.id),
          ["old"],
        );
      }));

    test("a list pages newest first with a cursor; its limit is bounded", (t) =>
      withFacts(t, target, async (store) => {
        const s = { sessionId: "s" };
        await storedMessages(store, "s", ["m0", "m1", "m2", "m3", "m4"]);
        await store.facts.add(
          s,
          [0, 1, 2].map((i) => fact(`Fact ${i}.`, [["s", `m${i}`]], { id: `f${i}` })),
        );
        await store.facts.add(
          s,
          [3, 4].map((i) => fact(`Fact ${i}.`, [["s", `m${i}`]], { id: `f${i}` })),
        );
        const pages: string[][] = [];
        let cursor: string | null = null;
        do {
          const page = await store.facts.list(s, { limit: 2, cursor });
          pages.push(page.facts.map((f) => f.id));
          cursor = page.next;
        } while (cursor !== null && pages.length < 10);
        assert.deepEqual(pages, [["f4", "f3"], ["f2", "f1"], ["f0"]]);
        assert.deepEqual(
          (await store.facts.list(s, { limit: 5 })).next,
          null,
          "a full last page has no next",
        );
        assert.deepEqual(
          (await store.facts.list(s, { sourcesIn: ["m1", "m3", "nowhere"] })).facts.map((f) => f.id),
          ["f3", "f1"],
        );
        assert.deepEqual((await store.facts.list(s, { limit: 0 })).facts, []);
        await rejectsWithCode(store.facts.list(s, { limit: 101 }), "INVALID_ARGUMENT", { path: "limit" });
        await rejectsWithCode(store.facts.list(s, { cursor: "not a cursor" }), "INVALID_ARGUMENT", {
          path: "cursor",
        });
        await rejectsWithCode(store.facts.list(s, { status: ["gone" as never] }), "INVALID_ARGUMENT", {
          path: "status",
        });
      }));

    test("search ranks facts by the query language and keeps to its status and sources filters", (t) =>
      withFacts(t, target, async (store) => {
        const s = { sessionId: "s" };
        await storedMessages(store, "s", ["m1", "m2", "m3", "m4"]);
        await store.facts.add(s, [
          fact("Caroline moved to Boston in May.", [["s", "m1"]], { id: "boston", about: "Caroline" }),
          fact("Caroline paints landscapes.", [["s", "m2"]], { id: "paints", about: "Caroline" }),
          fact("Melanie runs marathons.", [["s", "m3"]], { id: "runs", about: "Melanie" }),
          fact("Caroline lived in Sweden.", [["s", "m4"]], { id: "sweden", about: "Caroline" }),
        ]);
        const hits = await store.facts.search(s, "Where did Caroline move to? Boston");
        assert.equal(hits[0]?.fact.id, "boston", "the fact matching most terms first");
        assert.deepEqual(
          hits.map((h) => h.rank),
          hits.map((_, i) => i + 1),
        );
        assert.deepEqual(new Set(hits.map((h) => h.fact.id)), new Set(["boston", "paints", "sweden"]));
        assert.deepEqual((await store.facts.search(s, "Caroline", { limit: 1 })).length, 1);
        assert.deepEqual(
          (await store.facts.search(s, "Caroline", { sourcesIn: ["m2", "m3"] })).map((h) => h.fact.id),
          ["paints"],
        );
        await store.facts.supersede(s, "sweden", "boston");
        assert.equal((await store.facts.search(s, "Sweden")).length, 0, "a superseded fact is not current");
        assert.deepEqual(
          (await store.facts.search(s, "Sweden", { status: ["superseded"] })).map((h) => h.fact.id),
          ["sweden"],
        );
        assert.deepEqual(await store.facts.search(s, "the of and"), [], "no content word: nothing");
        assert.deepEqual(await store.facts.search(s, "Boston", { sourcesIn: [] }), []);
        assert.deepEqual(await store.facts.search({ sessionId: "other" }, "Boston"), []);
      }));

    test("sourceSession keeps a list or search to facts with a source in that session (and among sourcesIn)", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await ownedSession(store, "a1", "alice", []);
        await ownedSession(store, "a2", "alice", []);
        // Message ids are a session's own: both sessions hold an "m1".
        for (const id of ["m1", "m2"]) await store.session("a1").appendMessage(msg(id, `a1 ${id}`));
        await store.session("a2").appendMessage(msg("m1", "a2 m1"));
        const alice = { owner: "alice" };
        await store.facts.add(alice, [
          fact("Alice likes tea.", [["a1", "m1"]], { id: "tea" }),
          fact("Alice likes coffee.", [["a2", "m1"]], { id: "coffee" }),
          fact(
            "Alice likes tea and coffee.",
            [
              ["a1", "m2"],
              ["a2", "m1"],
            ],
            { id: "both" },
          ),
        ]);
        const listed = async (query: object) => (await store.facts.list(alice, query)).facts.map((f) => f.id);
        assert.deepEqual(await listed({ sourceSession: "a1" }), ["both", "tea"]);
        assert.deepEqual(await listed({ sourceSession: "a2", sourcesIn: ["m1"] }), ["both", "coffee"]);
        assert.deepEqual(await listed({ sourceSession: "a1", sourcesIn: ["m1"] }), ["tea"]);
        assert.deepEqual(await listed({ sourceSession: "nowhere" }), []);
        const found = await store.facts.search(alice, "likes", { sourceSession: "a1", sourcesIn: ["m2"] });
        assert.deepEqual(
          found.map((h) => h.fact.id),
          ["both"],
        );
        await rejectsWithCode(store.facts.list(alice, { sourceSession: 5 as never }), "INVALID_ARGUMENT", {
          path: "sourceSession",
        });
      }));
  });
}
