import assert from "node:assert/strict";
import type { SearchResult } from "../../contract/search.js";
import type { SessionStore } from "../../contract/store.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, msg, withStore } from "./harness.js";

// The active path, and a branch the conversation left under its second turn: longer turns, "harbour" in each, so
// counting them would make "harbour" commoner and every turn shorter than the average.
const PATH: [id: string, text: string][] = [
  ["p0", "Planning the harbour trip for the lantern festival"],
  ["p1", "The harbour opens at nine"],
  ["p2", "Bring a lantern for the evening walk"],
  ["p3", "The ferry leaves the harbour at ten"],
  ["p4", "Lantern paper is sold at the market"],
  ["p5", "We meet at the station"],
];
const LEFT = Array.from(
  { length: 6 },
  (_, i) => `Another idea ${i}: the harbour boats, the harbour walls and the old harbour crane, all day long`,
);

/** The path, with the abandoned branch appended before the path's later turns when `sibling`. */
async function seed(store: SessionStore, sibling: boolean): Promise<void> {
  const s = store.session("h");
  const [first, second, ...rest] = PATH;
  for (const [id, text] of [first!, second!]) await s.appendMessage(msg(id, text));
  if (sibling) {
    let parent = second![0];
    for (const [i, text] of LEFT.entries()) {
      await s.appendMessage(msg(`left${i}`, text, "assistant"), parent);
      parent = `left${i}`;
    }
  }
  let parent = second![0];
  for (const [id, text] of rest) {
    await s.appendMessage(msg(id, text), parent);
    parent = id;
  }
}

const ranking = (hits: readonly SearchResult[]) => hits.map((h) => `${h.id} ${h.score?.toPrecision(12)}`);

/** What an abandoned sibling branch changes in an active-branch search (RECALL.md: it takes no part at all). */
export function recallSiblingsSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("ranked recall: a branch the conversation left", () => {
    test("changes no score and no order of a session's active-branch search", async () => {
      const search = (sibling: boolean) =>
        withStore(target, async (store) => {
          await seed(store, sibling);
          const hits = await store.searchMessages("harbour lantern", { sessionId: "h", branch: "active" });
          const all = await store.searchMessages("harbour lantern", { sessionId: "h" });
          return { hits, all };
        });
      const without = await search(false);
      const withSibling = await search(true);
      assert.deepEqual(ranking(withSibling.hits), ranking(without.hits));
      assert.equal(without.hits.length, PATH.length - 1);
      // The whole tree's search does count it: the sibling is there to be counted.
      assert.ok(withSibling.all.some((h) => h.id.startsWith("left")));
    });

    test("changes no order of a store-wide active-branch search", async () => {
      const search = (sibling: boolean) =>
        withStore(target, async (store) => {
          await seed(store, sibling);
          return store.searchMessages("harbour lantern", { branch: "active" });
        });
      const order = (hits: readonly SearchResult[]) => hits.map((h) => h.id);
      assert.deepEqual(order(await search(true)), order(await search(false)));
    });
  });
}
