import assert from "node:assert/strict";
import type { SessionStore } from "../../contract/store.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, withStore } from "./harness.js";

// A conversation loaded with its own times; every turn names Caroline, so the words alone tie them.
const TURNS: [id: string, text: string, at: string][] = [
  ["apr2", "Caroline: support group plans for spring", "2023-04-02T10:00:00.000Z"],
  ["may8", "Caroline: I went to the support group yesterday", "2023-05-08T13:56:00.000Z"],
  ["may20", "Caroline: the support group was lovely", "2023-05-20T09:00:00.000Z"],
  [
    "jun12",
    "Caroline: painting again, two weeks ago I started a new support group",
    "2023-06-12T18:00:00.000Z",
  ],
];

async function seed(store: SessionStore): Promise<void> {
  const s = store.session("t");
  for (const [id, text, at] of TURNS)
    await s.appendMessage(msg(id, text, "user", { createdAt: new Date(at) }));
}

async function first(store: SessionStore, query: string): Promise<string | undefined> {
  return ids(await store.searchMessages(query, { sessionId: "t" }))[0];
}

/** Time-aware recall (docs/RECALL.md, "Time"): a question's times lift the turns of that time on every backend. */
export function timeRecallSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("time-aware recall", () => {
    test("a day asked finds a turn said the day after with 'yesterday'; a month, a week and a year their turns", () =>
      withStore(target, async (store) => {
        await seed(store);
        assert.equal(await first(store, "What did Caroline do on 7 May 2023?"), "may8");
        assert.equal(await first(store, "What did Caroline do on May 7?"), "may8");
        assert.equal(await first(store, "Caroline's support group on 2023-05-20"), "may20");
        assert.equal(await first(store, "What did Caroline plan in April 2023?"), "apr2");
        // "two weeks ago" on 12 June is the week of 29 May: a day asked lifts the turns of its week too.
        assert.equal(await first(store, "What did Caroline do around May 30, 2023?"), "jun12");
        assert.equal(await first(store, "Caroline in June"), "jun12");
        // `times: false`: the words alone, as if the question named no time.
        const untimed = { sessionId: "t", times: false };
        const plain = ids(await store.searchMessages("What did Caroline do?", { sessionId: "t" }));
        assert.notEqual(plain[0], "may8");
        assert.deepEqual(
          ids(await store.searchMessages("What did Caroline do on 7 May 2023?", untimed)),
          plain,
        );
        // A year every turn shares lifts them all alike: the order of the words alone.
        const words = ids(await store.searchMessages("Caroline support", { sessionId: "t" }));
        assert.deepEqual(
          ids(await store.searchMessages("Caroline support in 2023", { sessionId: "t" })),
          words,
        );
      }));

    test("a time counts as one term beside a word; a turn matching only the time is no hit", () =>
      withStore(target, async (store) => {
        await seed(store);
        const s = store.session("t");
        const may8 = new Date(TURNS[1]![2]);
        await s.appendMessage(msg("other", "Melanie: nothing much", "assistant", { createdAt: may8 }));
        await s.appendMessage(msg("both", "Caroline: lovely lovely group", "user", { createdAt: may8 }));
        const hits = ids(await store.searchMessages("Caroline lovely on 8 May 2023", { sessionId: "t" }));
        // Two words and the day, then two words (or one word and the day), then one word; the day alone is no hit.
        assert.equal(hits[0], "both");
        assert.deepEqual(hits.slice(1, 3).sort(), ["may20", "may8"]);
        assert.equal(hits.length, 5);
        assert.ok(!hits.includes("other"));
      }));

    test("a relative time in a question is taken from today; an edit keeps the first time for its new words", () =>
      withStore(target, async (store) => {
        await seed(store);
        const s = store.session("t");
        await s.appendMessage(msg("now", "Caroline: support group notes"));
        assert.equal(await first(store, "What did Caroline write today?"), "now");
        await s.updateMessage(
          msg("may20", "Caroline: the support group met yesterday", "user", {
            createdAt: new Date("2024-01-01T00:00:00.000Z"),
          }),
        );
        assert.equal(await first(store, "Caroline on 19 May 2023"), "may20");
        assert.notEqual(await first(store, "Caroline on 31 December 2023"), "may20");
      }));
  });
}
