// Owner isolation on the vector channel: a search kept to one owner (the store's `owner` option, which
// `SessionManager.forOwner(...).search` and its `session_search` tool pass) never returns another owner's message,
// or an unowned one, even where the vectors rank it first and no word of the query matches anything (issue #59).
import assert from "node:assert/strict";
import { test } from "node:test";
import { SessionManager } from "../src/manager/manager.js";
import { MAX_SEARCH_SESSIONS } from "../src/search/options.js";
import { msg } from "../src/testing/contract/harness.js";
import { channel, describeTargets, importCrowd, seed, TEXTS, withEmbedded } from "./vectors/helpers.js";

const QUESTION = "Which automobile did I get?";

await describeTargets((target) => {
  test("an owner's search with vectors returns only the owner's messages", async () => {
    await withEmbedded(target.fresh, async (store) => {
      // "a" (car, doc) is alice's, "b" (music, food) bob's; "loose" is nobody's and nearest to the question.
      await seed(store);
      await store.session("loose").appendMessage(msg("sedan", "Parked my sedan in the garage"));
      await store.registry.create({ id: "a", name: "a", owner: "alice" });
      await store.registry.create({ id: "b", name: "b", owner: "bob" });
      await channel(store).idle();
      // Store-wide, the vectors bring alice's "car" and the unowned "sedan" to the question.
      const all = (await store.searchMessages(QUESTION, { limit: 10 })).map((hit) => hit.id);
      assert.ok(all.includes("car") && all.includes("sedan"), all.join());

      const bob = await store.searchMessages(QUESTION, { owner: "bob", limit: 10 });
      assert.ok(
        bob.every((hit) => hit.sessionId === "b"),
        bob.map((hit) => hit.id).join(),
      );
      const alice = await store.searchMessages(QUESTION, { owner: "alice", limit: 10 });
      assert.ok(
        alice.some((hit) => hit.id === "car"),
        "the vector hit of the owner's own session is found",
      );
      assert.ok(
        alice.every((hit) => hit.sessionId === "a"),
        alice.map((hit) => hit.id).join(),
      );
      // Naming another owner's session narrows to nothing; an owner with no sessions finds nothing.
      assert.deepEqual(
        await store.searchMessages(QUESTION, { owner: "bob", sessionIds: ["a", "loose"] }),
        [],
      );
      assert.deepEqual(await store.searchMessages(QUESTION, { owner: "carol" }), []);

      // The same through the manager's owner view and its session_search tool.
      const manager = new SessionManager(store);
      const view = manager.forOwner("bob");
      assert.ok((await view.search(QUESTION, { limit: 10 })).every((hit) => hit.sessionId === "b"));
      const output = String(await view.tools().session_search?.execute({ query: QUESTION }));
      assert.ok(/pasta|violin/.test(output) && !/sedan|physician/.test(output), output);
    });
  });

  test("an owner with more sessions than a search may name gets its vector hits inside the read", async () => {
    await withEmbedded(target.fresh, async (store) => {
      // 80 unowned messages nearer to the question than alice's "car": more than a search's vector candidates, so
      // a store-wide read filtered afterwards would find none of alice's.
      await importCrowd(store, 80);
      for (let i = 0; i < MAX_SEARCH_SESSIONS + 5; i++) {
        await store.registry.create({ id: `alice-${i}`, name: `alice ${i}`, owner: "alice" });
      }
      await store.session("alice-3").appendMessage(msg("car", TEXTS.car));
      await channel(store).idle();
      const hits = await store.searchMessages(QUESTION, { owner: "alice", limit: 10 });
      assert.deepEqual(
        hits.map((hit) => hit.id),
        ["car"],
      );
      const near = await channel(store).nearest(QUESTION, { limit: 5, owner: "alice" });
      assert.deepEqual(near.length, 1);
      assert.deepEqual(await channel(store).nearest(QUESTION, { limit: 5, owner: "bob" }), []);
    });
  });
});
