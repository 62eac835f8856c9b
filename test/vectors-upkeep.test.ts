// The vector channel's upkeep (store.vectors) on every backend with a deterministic embedder: it backfills
// stores made without it, survives a failing embedder, keeps vectors right through updates and deletes, and gives
// up a hung embedder call on close. Without an embedder there is no channel and no table.
import assert from "node:assert/strict";
import { test } from "node:test";
import { msg } from "../src/testing/contract/harness.js";
import { testEmbedder } from "./vectors/embedder.js";
import { channel, describeTargets, openBroken, seed, TEXTS, until, withStorage } from "./vectors/helpers.js";

await describeTargets((target) => {
  test("no embedder: no channel and no vector table", async () => {
    await withStorage(target.fresh, async (storage) => {
      const store = await storage.open({});
      try {
        await seed(store);
        assert.equal(store.vectors, undefined);
        assert.deepEqual(await storage.vectorTables(store), []);
      } finally {
        await store.close();
      }
    });
  });

  test("a failing embedder is reported, appends succeed, and backfill catches up later", async () => {
    await withStorage(target.fresh, async (storage) => {
      const { store, state, errors } = await openBroken(storage);
      try {
        await seed(store);
        const vectors = channel(store);
        await vectors.idle();
        assert.deepEqual(
          (await store.session("a").getHistory()).map((m) => m.id),
          ["car", "doc"],
        );
        assert.ok(errors.length >= 1, "the failure was reported");
        assert.match(String(errors[0]), /embedding service unavailable/);
        const status = await vectors.status();
        assert.equal(status.embedded + status.pending, 4);
        assert.ok(status.pending > 0);
        assert.match(status.lastError ?? "", /embedding service unavailable/);
        // The query's own embedding fails too: reported, and the channel answers nothing instead of throwing.
        assert.deepEqual(await vectors.nearest("automobile", { limit: 3 }), []);
        const failing = await vectors.backfill();
        assert.equal(failing.embedded, 0);
        assert.ok(failing.failed > 0);
        state.broken = false;
        assert.deepEqual(await vectors.backfill(), { embedded: status.pending, failed: 0 });
        assert.deepEqual(await vectors.status(), { embedded: 4, pending: 0 });
        assert.deepEqual(await storage.ids(store, await vectors.nearest("automobile", { limit: 1 })), [
          "car",
        ]);
      } finally {
        await store.close();
      }
    });
  });

  test("the background work retries a failed batch by itself once the embedder recovers", async () => {
    await withStorage(target.fresh, async (storage) => {
      const { store, state, errors } = await openBroken(storage);
      try {
        await store.session("a").appendMessage(msg("car", TEXTS.car));
        await until(() => errors.length > 0);
        state.broken = false;
        // The first retry comes a second after the failure, with no write or call to prompt it.
        await until(async () => (await channel(store).status()).pending === 0);
        assert.deepEqual(await channel(store).status(), { embedded: 1, pending: 0 });
        assert.equal(errors.length, 1);
      } finally {
        await store.close();
      }
    });
  });

  test("updates re-embed a changed text (not an unchanged one) and deletes remove vectors", async () => {
    await withStorage(target.fresh, async (storage) => {
      const { embed, state } = testEmbedder();
      const store = await storage.open({ embedder: embed });
      try {
        await seed(store);
        const vectors = channel(store);
        await vectors.idle();
        const a = store.session("a");
        const texts = state.texts;
        await a.updateMessage(msg("car", TEXTS.car, "user", { metadata: { starred: true } }));
        await vectors.idle();
        assert.equal(state.texts, texts, "same text: no embedder call");
        assert.deepEqual(await vectors.status(), { embedded: 4, pending: 0 });
        await a.updateMessage(msg("car", "Booked a clinic visit for Monday"));
        await vectors.idle();
        assert.equal(state.texts, texts + 1);
        const best = async (query: string) => storage.ids(store, await vectors.nearest(query, { limit: 1 }));
        assert.deepEqual(await best("doctor clinic"), ["car"]);
        assert.notDeepEqual(await best("automobile"), ["car"]);
        await a.deleteMessages(["doc"]);
        await store.session("b").clearMessages();
        await vectors.idle();
        assert.deepEqual(await storage.ids(store, await vectors.nearest("physician", { limit: 10 })), [
          "car",
        ]);
        assert.deepEqual(await vectors.status(), { embedded: 1, pending: 0 });
        if (target.index !== "memory") assert.equal(await storage.vectorRows(store), 1);
      } finally {
        await store.close();
      }
    });
  });

  test("backfill embeds a store made without an embedder, in batches, with progress", {
    skip: target.reopens ? false : "a MemoryStore cannot be reopened with an embedder",
  }, async () => {
    await withStorage(target.fresh, async (storage) => {
      const plain = await storage.open({});
      await seed(plain);
      await plain.session("a").appendMessage(msg("tool", "", "assistant"));
      await plain.close();
      const { embed, state } = testEmbedder();
      const store = await storage.open({ embedder: embed });
      try {
        const vectors = channel(store);
        assert.deepEqual(await vectors.status(), { embedded: 0, pending: 5 });
        assert.deepEqual(await vectors.nearest("automobile", { limit: 3 }), []);
        const progress: [number, number][] = [];
        const result = await vectors.backfill({
          batchSize: 2,
          onProgress: (d, t) => progress.push([d, t]),
        });
        assert.deepEqual(result, { embedded: 5, failed: 0 });
        assert.deepEqual(progress, [
          [0, 5],
          [2, 5],
          [4, 5],
          [5, 5],
        ]);
        assert.equal(state.texts, 4, "a message without text is not sent to the embedder");
        assert.deepEqual(await vectors.status(), { embedded: 5, pending: 0 });
        assert.deepEqual(await vectors.backfill(), { embedded: 0, failed: 0 });
        assert.deepEqual(await storage.ids(store, await vectors.nearest("automobile", { limit: 1 })), [
          "car",
        ]);
      } finally {
        await store.close();
      }
    });
  });

  test("a message without text first, before any vector exists, does not fail the batch", async () => {
    await withStorage(target.fresh, async (storage) => {
      const { embed } = testEmbedder();
      const store = await storage.open({ embedder: embed });
      try {
        await store.session("a").appendMessage(msg("tool", "", "assistant"));
        await store.session("a").appendMessage(msg("car", TEXTS.car));
        const vectors = channel(store);
        await vectors.backfill();
        assert.deepEqual(await vectors.status(), { embedded: 2, pending: 0 });
        assert.deepEqual(await storage.ids(store, await vectors.nearest("automobile", { limit: 1 })), [
          "car",
        ]);
      } finally {
        await store.close();
      }
    });
  });

  test("close() abandons an embedder call that never answers; the channel then refuses with CLOSED", async () => {
    await withStorage(target.fresh, async (storage) => {
      const { embed, state } = testEmbedder();
      state.hang = true;
      const store = await storage.open({ embedder: embed });
      await store.session("a").appendMessage(msg("car", TEXTS.car));
      await until(() => state.calls >= 1);
      await store.close();
      await assert.rejects(channel(store).status(), { code: "CLOSED" });
    });
  });
});
