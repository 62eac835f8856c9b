// The vector channel of hybrid recall (store.vectors) on every backend with a deterministic embedder: nearest()
// finds by meaning what shares no word with the query, within a session or a set of sessions, and a search fuses
// its hits with the text channel's.
import assert from "node:assert/strict";
import { test } from "node:test";
import { msg } from "../src/testing/contract/harness.js";
import { testEmbedder } from "./vectors/embedder.js";
import { channel, describeTargets, seed, withStorage } from "./vectors/helpers.js";

await describeTargets((target) => {
  test("nearest finds by meaning a message that shares no word with the query, in scope", async () => {
    await withStorage(target.fresh, async (storage) => {
      const { embed } = testEmbedder();
      const store = await storage.open({ embedder: embed });
      try {
        await seed(store);
        const vectors = channel(store);
        await vectors.idle();
        assert.equal(vectors.index, target.index);
        assert.deepEqual(await vectors.status(), { embedded: 4, pending: 0 });
        const best = async (query: string, sessionId?: string) =>
          storage.ids(
            store,
            await vectors.nearest(query, { limit: 1, ...(sessionId === undefined ? {} : { sessionId }) }),
          );
        assert.deepEqual(await best("automobile"), ["car"]);
        assert.deepEqual(await best("which doctor"), ["doc"]);
        assert.deepEqual(await best("guitar concert"), ["music"]);
        // Within session "b" the car message is out of scope.
        assert.notDeepEqual(await best("automobile", "b"), ["car"]);
        assert.deepEqual(await best("guitar concert", "b"), ["music"]);
        assert.deepEqual(await vectors.nearest("automobile", { sessionId: "nobody", limit: 5 }), []);
        // A set of sessions is the scope too.
        const inSet = async (query: string, sessionIds: string[]) =>
          storage.ids(store, await vectors.nearest(query, { sessionIds, limit: 1 }));
        assert.deepEqual(await inSet("automobile", ["b", "a"]), ["car"]);
        assert.notDeepEqual(await inSet("automobile", ["b", "nobody"]), ["car"]);
        assert.deepEqual(await inSet("automobile", []), []);
        assert.deepEqual(await inSet("automobile", ["nobody"]), []);
        await assert.rejects(vectors.nearest("automobile", { sessionIds: "a" as never, limit: 1 }), {
          code: "INVALID_ARGUMENT",
        });
        const all = await storage.ids(store, await vectors.nearest("automobile", { limit: 10 }));
        assert.deepEqual([...all].sort(), ["car", "doc", "food", "music"]);
        assert.deepEqual(await vectors.nearest("automobile", { limit: 0 }), []);
        assert.deepEqual(await vectors.nearest("   ", { limit: 3 }), []);
      } finally {
        await store.close();
      }
    });
  });

  test("search fuses the channels: a hit only the vectors find is among the results; vectors: false leaves it out", async () => {
    await withStorage(target.fresh, async (storage) => {
      const { embed } = testEmbedder();
      const store = await storage.open({ embedder: embed });
      try {
        await seed(store);
        await store.session("a").appendMessage(msg("late", "Dinner with the physician was fun"));
        await channel(store).idle();
        // No message holds "automobile": only the vector channel finds the sedan.
        const fused = await store.searchMessages("Which automobile did I get?", { sessionId: "a" });
        assert.ok(
          fused.some((h) => h.id === "car"),
          fused.map((h) => h.id).join(),
        );
        assert.deepEqual(
          await store.searchMessages("Which automobile did I get?", { sessionId: "a", vectors: false }),
          [],
        );
        // The text channel still ranks its own hits: both channels agree on the physician messages.
        const doctor = await store.searchMessages("physician doctor", { sessionId: "a", limit: 2 });
        assert.deepEqual(doctor.map((h) => h.id).sort(), ["doc", "late"]);
        assert.ok(doctor.every((h) => typeof h.score === "number"));
        // Filters apply to vector hits too: none in another session, none of another role.
        const elsewhere = await store.searchMessages("automobile physician", { sessionId: "b" });
        assert.ok(elsewhere.every((h) => h.sessionId === "b"));
        const users = await store.searchMessages("which doctor", { sessionId: "a", role: "user" });
        assert.ok(users.every((h) => h.role === "user") && !users.some((h) => h.id === "doc"));
        assert.deepEqual(await store.searchMessages("Which automobile?", { match: "all" }), []);
      } finally {
        await store.close();
      }
    });
  });

  test("a set of sessions gets the vector hits of its own sessions, however many nearer ones others hold", async () => {
    await withStorage(target.fresh, async (storage) => {
      const { embed } = testEmbedder();
      const store = await storage.open({ embedder: embed });
      try {
        await seed(store);
        // More messages nearer to "automobile" than the channel brings to a search, all in another session.
        const other = store.session("garage");
        for (let i = 0; i < 80; i++) await other.appendMessage(msg(`g${i}`, "sedan sedan cars"));
        await channel(store).idle();
        const hits = await store.searchMessages("Which automobile did I get?", { sessionIds: ["a", "b"] });
        assert.ok(
          hits.some((h) => h.id === "car"),
          hits.map((h) => h.id).join(),
        );
      } finally {
        await store.close();
      }
    });
  });
});
