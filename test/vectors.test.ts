// The vector channel of hybrid recall (store.vectors) on every backend with a deterministic embedder: it finds by
// meaning what shares no word with the query, backfills stores made without it, survives a failing embedder, and
// keeps vectors right through updates and deletes. Without an embedder there is no channel and no table.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { StoreVectors } from "../src/search/vectors/channel.js";
import { msg } from "../src/testing/contract/harness.js";
import { testEmbedder } from "./vectors/embedder.js";
import { closeTargets, type Storage, type VectorStore, vectorTargets } from "./vectors/targets.js";

const targets = await vectorTargets();
after(closeTargets);

const TEXTS: Record<string, string> = {
  car: "I finally bought a new sedan yesterday",
  doc: "The physician said my knee heals well",
  music: "We went to a violin recital on Sunday",
  food: "Dinner was pasta with tomatoes",
};

function channel(store: VectorStore): StoreVectors {
  assert.ok(store.vectors, "the store has a vector channel");
  return store.vectors;
}

async function withStorage(
  fresh: () => Promise<Storage>,
  body: (storage: Storage) => Promise<void>,
): Promise<void> {
  const storage = await fresh();
  try {
    await body(storage);
  } finally {
    await storage.dispose();
  }
}

async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  for (const start = Date.now(); !(await check()); ) {
    if (Date.now() - start > ms) throw new Error("timed out waiting for the background work");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function seed(store: VectorStore): Promise<void> {
  const a = store.session("a");
  await a.appendMessage(msg("car", TEXTS.car));
  await a.appendMessage(msg("doc", TEXTS.doc, "assistant"));
  const b = store.session("b");
  await b.appendMessage(msg("music", TEXTS.music));
  await b.appendMessage(msg("food", TEXTS.food));
}

for (const target of targets) {
  describe(`vectors: ${target.name}`, { skip: target.skip }, () => {
    if (target.skip) console.log(`Skipping vectors on ${target.name}: ${target.skip}`);

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
        const { embed, state } = testEmbedder();
        const errors: unknown[] = [];
        state.broken = true;
        const store = await storage.open({ embedder: embed, onEmbedError: (error) => errors.push(error) });
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
        const { embed, state } = testEmbedder();
        const errors: unknown[] = [];
        state.broken = true;
        const store = await storage.open({ embedder: embed, onEmbedError: (error) => errors.push(error) });
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
          const best = async (query: string) =>
            storage.ids(store, await vectors.nearest(query, { limit: 1 }));
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
}

test("bad vector options are refused when the store is made", async () => {
  const { MemoryStore } = await import("../src/memory/store.js");
  assert.throws(() => new MemoryStore({ embedder: "model" as never }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => new MemoryStore({ embedder: async () => [], embedDimensions: 0 }), {
    code: "INVALID_ARGUMENT",
  });
  assert.throws(() => new MemoryStore({ embedder: async () => [], vectorIndex: "hnsw" as never }), {
    code: "INVALID_ARGUMENT",
  });
  const store = new MemoryStore({ embedder: async () => [] });
  await assert.rejects(store.vectors!.nearest("x", { limit: -1 }), { code: "INVALID_ARGUMENT" });
  await assert.rejects(store.vectors!.nearest("x", undefined as never), { code: "INVALID_ARGUMENT" });
  await assert.rejects(store.vectors!.backfill({ batchSize: 0 }), { code: "INVALID_ARGUMENT" });
  await store.close();
});

test("an embedder answering the wrong size or count is reported, and nothing is stored", async () => {
  const { MemoryStore } = await import("../src/memory/store.js");
  const errors: unknown[] = [];
  let answer: (texts: string[]) => number[][] = (texts) => texts.map(() => [1, 0, 0]);
  const store = new MemoryStore({
    embedder: async (texts) => answer(texts),
    embedDimensions: 4,
    onEmbedError: (error) => errors.push(error),
  });
  try {
    await store.session("a").appendMessage(msg("a", "some text"));
    assert.deepEqual(await store.vectors!.backfill(), { embedded: 0, failed: 1 });
    assert.match(String(errors.at(-1)), /3 dimensions, the store's are 4/);
    answer = () => [];
    assert.deepEqual(await store.vectors!.backfill(), { embedded: 0, failed: 1 });
    assert.match(String(errors.at(-1)), /returned 0 vectors for 1 texts/);
    answer = (texts) => texts.map(() => [1, Number.NaN, 0, 0]);
    assert.deepEqual(await store.vectors!.backfill(), { embedded: 0, failed: 1 });
    assert.match(String(errors.at(-1)), /holds NaN/);
    assert.equal((await store.vectors!.status()).pending, 1);
  } finally {
    await store.close();
  }
});
