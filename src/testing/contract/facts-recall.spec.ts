// Recall with facts (docs/FACTS.md#recall): a fact that ranks lifts the turns it came from, `facts: "hits"` returns
// it with its sources, a fact counts only through its sources in the search's scope (its session, its set, its
// owner's sessions, their active paths), and a store with no facts answers as with the channel off. Skipped on a
// store without facts.
import assert from "node:assert/strict";
import type { FactCapableStore } from "../../contract/facts.js";
import type { SearchItem, StoreSearchOptions } from "../../contract/search.js";
import type { Suite } from "../runner.js";
import { fact, ownedSession, withFacts, withOwnedFacts } from "./facts-harness.js";
import { type ContractTarget, msg, rejectsWithCode } from "./harness.js";

const QUESTION = "What is Dana's profession?";
const TEACHER = "Dana's profession: chemistry teacher.";

/** A search with any options, `facts: "hits"` among them (the SessionStore interface types one signature). */
const search = (store: FactCapableStore, query: string, options: object): Promise<SearchItem[]> =>
  store.searchMessages(query, options as StoreSearchOptions);

/** Each item's id, a fact's as `fact:<text>`. */
const ids = (items: readonly SearchItem[]) =>
  items.map((item) => ("kind" in item ? `fact:${item.text}` : item.id));

/** Dana's chat: the turn that says what she does never names her profession; a fact made of it does. */
async function dana(store: FactCapableStore): Promise<void> {
  const session = store.session("dana");
  await session.appendMessage(msg("u1", "I started somewhere new last week."));
  await session.appendMessage(msg("a1", "Congratulations! What do you do there?", "assistant"));
  await session.appendMessage(msg("u2", "I teach chemistry at the high school downtown."));
  await session.appendMessage(msg("a2", "A profession of patience, they say.", "assistant"));
  await session.appendMessage(msg("u3", "My sister thinks every profession is a calling."));
}

/** Ranked recall fused with the store's facts, on every backend with a fact store. */
export function factsRecallSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("facts in recall", () => {
    test("a store with no facts answers exactly as with the channel off", (t) =>
      withFacts(t, target, async (store) => {
        await dana(store);
        const on = await search(store, QUESTION, { sessionId: "dana" });
        assert.deepEqual(on, await search(store, QUESTION, { sessionId: "dana", facts: false }));
        assert.deepEqual(ids(on), ["a2", "u3"]);
      }));

    test("a fact that ranks lifts its source turn, which no word of the question reaches", (t) =>
      withFacts(t, target, async (store) => {
        await dana(store);
        await store.facts.add({ sessionId: "dana" }, [fact(TEACHER, [["dana", "u2"]], { about: "Dana" })]);
        assert.deepEqual(ids(await search(store, QUESTION, { sessionId: "dana", facts: false })), [
          "a2",
          "u3",
        ]);
        const on = await search(store, QUESTION, { sessionId: "dana" });
        // u2 matches no word: the fact alone brings it, after the turns that match; ranks stay 1, 2, 3.
        assert.deepEqual(ids(on), ["a2", "u3", "u2"]);
        assert.deepEqual(
          on.map((hit) => hit.rank),
          [1, 2, 3],
        );
        const lifted = on[2]!;
        assert.ok(!("kind" in lifted));
        assert.equal(lifted.content, "I teach chemistry at the high school downtown.");
        assert.equal(lifted.sessionId, "dana");
        // Where the turn matches too, its fact moves it up past a turn that matched as much.
        assert.equal((await search(store, "chemistry profession", { sessionId: "dana" }))[0]?.id, "u2");
        // An all-words search takes no facts: it answers the words it was given.
        assert.deepEqual(
          await search(store, "Dana profession", { sessionId: "dana", match: "all", facts: "hits" }),
          [],
        );
        await rejectsWithCode(search(store, "profession", { facts: "yes" }), "INVALID_ARGUMENT");
      }));

    test("a strong fact lifts a turn that matches a word past turns matching as much, never past one matching more", (t) =>
      withFacts(t, target, async (store) => {
        // "oboe concert": `both` matches both words; ten short turns and one long one match "concert" alone, each
        // between turns that match nothing (so no exchange joins them). The long one comes last of its count.
        const session = store.session("c");
        const turns: [string, string][] = [["both", "The concert opened with an oboe."]];
        for (let i = 1; i <= 10; i++) turns.push([`one${i}`, `Concert ${i} was fine.`]);
        turns.push([
          "long",
          "After weeks of rehearsals and long evenings of practice with friends from the old neighbourhood we went to the concert.",
        ]);
        for (const [i, [id, text]] of turns.entries()) {
          await session.appendMessage(msg(id, text));
          await session.appendMessage(msg(`gap${i}`, "Nice weather today.", "assistant"));
        }
        const before = ids(await search(store, "oboe concert", { sessionId: "c", facts: false }));
        assert.deepEqual([before[0], before.at(-1)], ["both", "long"]);
        // A fact matching as many of the query's terms as the best turn: it weighs as a turn for `long`, which
        // matches a word itself, so `long` passes the ten that match as much, not `both`, which matches more.
        await store.facts.add({ sessionId: "c" }, [
          fact("Dana played the oboe at the concert.", [["c", "long"]]),
        ]);
        const after = ids(await search(store, "oboe concert", { sessionId: "c" }));
        assert.deepEqual(after, ["both", "long", ...before.slice(1, -1)]);
      }));

    test("a fact matching fewer of the query's terms than the best fact lifts its turn by half as much", (t) =>
      withFacts(t, target, async (store) => {
        // "oboe concert": `both` matches both words, six short turns "concert" alone, each between turns that match
        // nothing (so no exchange joins them).
        const session = store.session("h");
        const turns: [string, string][] = [["both", "The concert opened with an oboe."]];
        for (let i = 1; i <= 6; i++) turns.push([`one${i}`, `Concert ${i} was fine.`]);
        for (const [i, [id, text]] of turns.entries()) {
          await session.appendMessage(msg(id, text));
          await session.appendMessage(msg(`gap${i}`, "Nice weather today.", "assistant"));
        }
        const before = ids(await search(store, "oboe concert", { sessionId: "h", facts: false }));
        assert.equal(before[0], "both");
        // The best fact matches both words (it names `both`, first already); the second matches "concert" alone and
        // names the fifth turn: at half the share, 1 / (5 + 5) + 0.25 / (5 + 2), it passes the third and fourth
        // turns, not the second (at the whole share it passed that one too).
        await store.facts.add({ sessionId: "h" }, [
          fact("Dana played the oboe at the concert.", [["h", "both"]]),
          fact("Someone liked a concert.", [["h", before[4]!]]),
        ]);
        const after = ids(await search(store, "oboe concert", { sessionId: "h" }));
        assert.deepEqual(after, [before[0], before[1], before[4], before[2], before[3], ...before.slice(5)]);
      }));

    test("a question naming one fact's subject takes the facts about that subject before those about another", (t) =>
      withFacts(t, target, async (store) => {
        const session = store.session("p");
        await session.appendMessage(
          msg("t1", "I painted the lake at dawn, the light was soft and pink over the pier."),
        );
        await session.appendMessage(msg("t2", "That is lovely!", "assistant"));
        await session.appendMessage(msg("t3", "Thanks, it took all weekend."));
        // Caroline's fact is shorter, so it ranks first by its words; it names Melanie only in passing.
        await store.facts.add({ sessionId: "p" }, [
          fact("Melanie painted the lake at dawn during a quiet weekend away from home.", [["p", "t1"]], {
            about: "Melanie",
          }),
          fact("Caroline admires Melanie's painting.", [["p", "t2"]], { about: "Caroline" }),
        ]);
        const order = async (question: string) =>
          (await search(store, question, { sessionId: "p", facts: "hits" })).map((item) =>
            "kind" in item ? `fact:${item.about}` : item.id,
          );
        assert.deepEqual(await order("What did Melanie paint?"), [
          "t1",
          "fact:Melanie",
          "t2",
          "fact:Caroline",
        ]);
        // Both subjects named, or none: the facts keep their order by words.
        assert.deepEqual(await order("What did Caroline and Melanie paint?"), [
          "t1",
          "t2",
          "fact:Caroline",
          "fact:Melanie",
        ]);
        assert.deepEqual(await order("What was painted?"), ["t1", "t2", "fact:Caroline", "fact:Melanie"]);
      }));

    test('facts: "hits" returns the fact among the turns, with its sources; the limit counts it', (t) =>
      withFacts(t, target, async (store) => {
        await dana(store);
        const [added] = await store.facts.add({ sessionId: "dana" }, [
          fact(
            TEACHER,
            [
              ["dana", "u1"],
              ["dana", "u2"],
            ],
            { about: "Dana" },
          ),
        ]);
        const items = await search(store, QUESTION, { sessionId: "dana", facts: "hits" });
        const found = items.find((item) => "kind" in item);
        assert.ok(found && "kind" in found);
        assert.equal(found.id, added!.id);
        assert.equal(found.about, "Dana");
        assert.deepEqual(found.sources, [
          { sessionId: "dana", messageId: "u1" },
          { sessionId: "dana", messageId: "u2" },
        ]);
        assert.deepEqual(
          items.map((item) => item.rank),
          items.map((_, i) => i + 1),
        );
        assert.ok((await search(store, QUESTION, { sessionId: "dana" })).every((hit) => !("kind" in hit)));
        const one = await search(store, "profession", { sessionId: "dana", facts: "hits", limit: 1 });
        assert.equal(one.length, 1);
      }));

    test("a turn a fact brings still passes the role filter; the fact in scope is a hit", (t) =>
      withFacts(t, target, async (store) => {
        await dana(store);
        await store.facts.add({ sessionId: "dana" }, [fact(TEACHER, [["dana", "u2"]])]);
        const items = await search(store, QUESTION, { sessionId: "dana", role: "assistant", facts: "hits" });
        assert.deepEqual(ids(items), ["a2", `fact:${TEACHER}`]);
      }));

    test("an active-branch search takes only facts with a source on the active path", (t) =>
      withFacts(t, target, async (store) => {
        const session = store.session("b");
        await session.appendMessage(msg("root", "Tell me about your school days."));
        await session.appendMessage(msg("off", "I played in the orchestra.", "assistant"), "root");
        await session.appendMessage(msg("on", "I mostly studied.", "assistant"), "root");
        await store.facts.add({ sessionId: "b" }, [fact("Dana's instrument was the oboe.", [["b", "off"]])]);
        const question = "Which instrument did Dana play?";
        // The fact ranks at its own share, after the turn it lifted (which has that share and its own).
        assert.deepEqual(ids(await search(store, question, { sessionId: "b", facts: "hits" })), [
          "off",
          "fact:Dana's instrument was the oboe.",
        ]);
        const active = { branch: "active", facts: "hits" };
        assert.deepEqual(await search(store, question, { sessionId: "b", ...active }), []);
        assert.deepEqual(await search(store, question, { sessionIds: ["b"], ...active }), []);
        // A fact with a source on the path counts through it alone.
        await store.facts.add({ sessionId: "b" }, [
          fact("Dana studied the oboe's repertoire.", [
            ["b", "off"],
            ["b", "on"],
          ]),
        ]);
        const both = await search(store, "oboe", { sessionId: "b", ...active });
        assert.deepEqual(ids(both), ["on", "fact:Dana studied the oboe's repertoire."]);
        assert.deepEqual(ids(await search(store, "oboe", { sessionIds: ["b"], ...active })), ids(both));
      }));

    test("an active-branch search reads only facts sourced on its path: off-path facts never crowd one out", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await store.registry.create({ id: "work", name: "work", owner: "dana" });
        await store.registry.create({ id: "old", name: "old", owner: "dana" });
        const work = store.session("work");
        await work.appendMessage(msg("root", "Tell me about your days."));
        await work.appendMessage(msg("off", "I used to run a lab.", "assistant"), "root");
        await work.appendMessage(msg("on", "I mostly graded papers.", "assistant"), "root");
        // Another session of the owner holds a message of the same id as the path's.
        await store.session("old").appendMessage(msg("on", "Something else entirely."));
        const onPath = "Dana has worked for many years as a chemistry teacher at the downtown high school.";
        const dana = { owner: "dana" };
        await store.facts.add(dana, [fact(onPath, [["work", "on"]])]);
        // More facts than a search reads (100), each ranking above the path's: shorter, and newer.
        for (const [session, message] of [
          ["work", "off"],
          ["old", "on"],
        ] as const) {
          const many = Array.from({ length: 110 }, (_, i) =>
            fact(`Chemistry teacher ${message} ${i}.`, [[session, message]]),
          );
          await store.facts.add(dana, many.slice(0, 100));
          await store.facts.add(dana, many.slice(100));
        }
        const active = { sessionId: "work", branch: "active", facts: "hits" };
        // The path's turn holds no word of the question: its fact lifts it.
        assert.deepEqual(ids(await search(store, "chemistry teacher", active)), ["on", `fact:${onPath}`]);
        const turns = await search(store, "chemistry teacher", { ...active, facts: true });
        assert.deepEqual(ids(turns), ["on"]);
      }));

    test("one owner's facts never lift or appear in another's search; a fact counts only in its sources' scope", (t) =>
      withOwnedFacts(t, target, async (store) => {
        await ownedSession(store, "alice-1", "alice", ["I keep my notes in a blue binder."]);
        await ownedSession(store, "alice-2", "alice", ["Nothing to see here."]);
        await ownedSession(store, "bob-1", "bob", ["The numbers are four seven one one."]);
        const alices = "Alice's vault code is kept in a binder.";
        const bobs = "Bob's vault code is 4711.";
        await store.facts.add({ owner: "bob" }, [fact(bobs, [["bob-1", "bob-1-0"]])]);
        await store.facts.add({ owner: "alice" }, [fact(alices, [["alice-1", "alice-1-0"]])]);
        const question = "What is the vault code?";
        const hits = (options: object) => search(store, question, { facts: "hits", ...options });
        assert.deepEqual(ids(await hits({ owner: "alice" })), ["alice-1-0", `fact:${alices}`]);
        // A session's search reads its owner's facts, kept to its own sessions.
        assert.deepEqual(ids(await hits({ sessionId: "alice-1" })), ["alice-1-0", `fact:${alices}`]);
        assert.deepEqual(await hits({ sessionId: "alice-2" }), []);
        assert.deepEqual(ids(await hits({ owner: "bob" })), ["bob-1-0", `fact:${bobs}`]);
        // An owner's search naming another owner's session keeps to its own.
        assert.deepEqual(ids(await hits({ owner: "alice", sessionIds: ["alice-1", "bob-1"] })), [
          "alice-1-0",
          `fact:${alices}`,
        ]);
        // A set of sessions reads each one's owner's facts, each through its own sessions.
        const set = ids(await hits({ sessionIds: ["alice-1", "bob-1"] }));
        assert.deepEqual([...set].sort(), ["alice-1-0", "bob-1-0", `fact:${alices}`, `fact:${bobs}`]);
        assert.deepEqual(ids(await hits({ sessionIds: ["alice-2", "bob-1"] })), ["bob-1-0", `fact:${bobs}`]);
      }));
  });
}
