// The vector channel refuses bad options when the store is made and when it is called, and stores nothing from an
// embedder that answers the wrong size, count or a NaN.
import assert from "node:assert/strict";
import { test } from "node:test";
import { msg } from "../src/testing/contract/harness.js";

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
