// A fact's sources are messages the store holds (docs/FACTS.md, "Sources"): `add` and an import refuse a source
// naming any other (never stored, deleted, or another session's id), storing none of the call's facts, so no fact
// outlives the messages it came from and an export of any store imports into one holding its messages. Skipped
// without facts (and, for owners, a registry).
import assert from "node:assert/strict";
import type { Fact, FactCapableStore } from "../../contract/facts.js";
import type { RegistryCapableStore } from "../../contract/registry.js";
import { exportFacts, importFactStream } from "../../store/transfer/facts.js";
import { rejectsWithCode, type Suite } from "../runner.js";
import { fact, ownedSession, withFacts, withOwnedFacts } from "./facts-harness.js";
import { type ContractTarget, msg } from "./harness.js";

type Store = FactCapableStore & RegistryCapableStore;
const alice = { owner: "alice" };

/** Alice's a1 and a2, Bob's b1, the ownerless s1; then a2-1 deleted and s1 cleared. */
async function sessions(store: Store): Promise<void> {
  await ownedSession(store, "a1", "alice", ["Alice moved to Boston", "She likes tea"]);
  await ownedSession(store, "a2", "alice", ["Alice lived in Paris", "She has a dog"]);
  await ownedSession(store, "b1", "bob", ["Bob plays chess"]);
  await ownedSession(store, "s1", null, ["A note"]);
}

async function prune(store: Store): Promise<void> {
  await store.session("a2").deleteMessages(["a2-1"]);
  await store.session("s1").clearMessages();
}

async function all(store: Store): Promise<Fact[]> {
  const facts: Fact[] = [];
  for await (const f of exportFacts(store.facts)) facts.push(f);
  return facts;
}

async function* stream(facts: readonly Fact[]): AsyncGenerator<Fact> {
  yield* facts;
}

/** The sources rule on every backend. */
export function factsSourcesSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("facts: sources are stored messages", () => {
    test("add refuses a source that is not a message of its session, storing none of the facts", (t) =>
      withFacts(t, target, async (store) => {
        const s = { sessionId: "s" };
        await store.session("s").appendMessage(msg("m1", "I moved to Boston"));
        await store.session("t").appendMessage(msg("t-0", "elsewhere"));
        const refused = (sources: [string, string][], at: string, extra: ReturnType<typeof fact>[] = []) =>
          rejectsWithCode(store.facts.add(s, [...extra, fact("x", sources)]), "INVALID_ARGUMENT", {
            path: at,
            rule: "invalid",
          });
        // Never stored; another session's message named under this one; one missing source of two.
        await refused([["s", "never"]], "facts.1.sources.0.messageId", [fact("ok", [["s", "m1"]])]);
        await refused([["s", "t-0"]], "facts.0.sources.0.messageId");
        await refused(
          [
            ["s", "m1"],
            ["s", "never"],
          ],
          "facts.0.sources.1.messageId",
        );
        assert.equal(await store.facts.isEmpty(), true, "a refused add stores none of its facts");
        await store.facts.add(s, [fact("Moved to Boston.", [["s", "m1"]], { id: "boston" })]);
        // Deleted: the fact went with its last source, and the message cannot be named again.
        await store.session("s").deleteMessages(["m1"]);
        assert.equal(await store.facts.get(s, "boston"), null);
        await refused([["s", "m1"]], "facts.0.sources.0.messageId");
        assert.equal(await store.facts.isEmpty(), true);
      }));

    test("an owner's fact may take sources from the owner's sessions, each a message stored there", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await sessions(store);
        await ownedSession(store, "a3", "alice", []);
        const [both] = await store.facts.add(alice, [
          fact("Alice moved from Paris to Boston.", [
            ["a1", "a1-0"],
            ["a2", "a2-0"],
          ]),
        ]);
        assert.equal(both?.sources.length, 2, "sources in two of the owner's sessions");
        const refused = (sources: [string, string][], path: string) =>
          rejectsWithCode(store.facts.add(alice, [fact("x", sources)]), "INVALID_ARGUMENT", { path });
        await refused([["a1", "a2-0"]], "facts.0.sources.0.messageId");
        await refused([["a3", "a3-0"]], "facts.0.sources.0.messageId");
        await refused([["b1", "b1-0"]], "facts.0.sources.0.sessionId");
        await refused([["nobody", "n-0"]], "facts.0.sources.0.sessionId");
        assert.equal((await store.facts.list(alice)).facts.length, 1);
      }));

    test("an export of a store whose messages were deleted imports into a store holding the same messages", (t) =>
      withOwnedFacts(t, target, async (from) => {
        await sessions(from);
        await from.facts.add(alice, [
          fact("Alice lives in Paris.", [["a2", "a2-0"]], { id: "paris" }),
          fact(
            "Alice has a dog and likes tea.",
            [
              ["a2", "a2-1"],
              ["a1", "a1-1"],
            ],
            { id: "dog" },
          ),
          fact("Alice has a dog.", [["a2", "a2-1"]], { id: "dog-only" }),
        ]);
        await from.facts.add({ sessionId: "s1" }, [fact("A note.", [["s1", "s1-0"]], { id: "note" })]);
        await prune(from);
        // What the deletes removed cannot be named again, by a session's fact or an owner's.
        await rejectsWithCode(
          from.facts.add({ sessionId: "s1" }, [fact("A note again.", [["s1", "s1-0"]])]),
          "INVALID_ARGUMENT",
        );
        await rejectsWithCode(from.facts.add(alice, [fact("A dog.", [["a2", "a2-1"]])]), "INVALID_ARGUMENT");
        const facts = await all(from);
        assert.deepEqual(facts.map((f) => f.id).sort(), ["dog", "paris"]);
        assert.deepEqual(
          facts.find((f) => f.id === "dog")?.sources,
          [{ sessionId: "a1", messageId: "a1-1" }],
          "the deleted source is dropped",
        );
        await withOwnedFacts(t, target, async (to) => {
          await sessions(to);
          await prune(to);
          assert.deepEqual(await importFactStream(to.facts, stream(facts)), { inserted: 2, skipped: 0 });
          assert.deepEqual((await all(to)).map((f) => f.id).sort(), ["dog", "paris"]);
        });
      }));
  });
}
