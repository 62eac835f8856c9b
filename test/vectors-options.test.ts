// The vector channel refuses bad options when the store is made and when it is called, and stores nothing from an
// embedder that answers the wrong size, count or a NaN.
import assert from "node:assert/strict";
import { test } from "node:test";
import { msg } from "../src/testing/contract/harness.js";
import { assertSessionError, rejectsWithIssue } from "./helpers/session-error.js";
import { channel } from "./vectors/helpers.js";

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
  await assert.rejects(store.vectors!.nearest("x", { limit: 1001 }), { code: "INVALID_ARGUMENT" });
  assert.deepEqual(await store.vectors!.nearest("x", { limit: 1000 }), []);
  await assert.rejects(store.vectors!.nearest("x", undefined as never), { code: "INVALID_ARGUMENT" });
  await assert.rejects(store.vectors!.backfill({ batchSize: 0 }), { code: "INVALID_ARGUMENT" });
  // null is no batch size, as an absent one.
  assert.deepEqual(await store.vectors!.backfill({ batchSize: null as never }), { embedded: 0, failed: 0 });
  await store.close();
});

test("nearest refuses bad role, time and branch options with INVALID_ARGUMENT, before any other work", async () => {
  const { MemoryStore } = await import("../src/memory/store.js");
  const store = new MemoryStore({ embedder: async (texts) => texts.map(() => [1, 0]) });
  try {
    const vectors = channel(store);
    const bad = [
      { role: "" },
      { role: [] },
      { role: ["user", 3] },
      { role: 5 },
      { since: "yesterday-ish" },
      { until: new Date(Number.NaN) },
      { until: 1_700_000_000_000 },
      { branch: "sideways" },
      { branch: 1 },
    ];
    for (const filters of bad) {
      for (const [query, limit] of [
        ["x", 3],
        ["   ", 3],
        ["x", 0],
      ] as const) {
        await assert.rejects(vectors.nearest(query, { limit, ...(filters as object) }), {
          code: "INVALID_ARGUMENT",
        });
      }
    }
    assert.deepEqual(await vectors.nearest("x", { limit: 3, role: null as never, since: null as never }), []);
  } finally {
    await store.close();
  }
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

test("a refused vector option names its field in the issues", async () => {
  const { MemoryStore } = await import("../src/memory/store.js");
  assertSessionError(() => new MemoryStore({ embedder: "model" as never }), {
    code: "INVALID_ARGUMENT",
    path: "embedder",
    rule: "type",
  });
  assertSessionError(() => new MemoryStore({ embedder: async () => [], embedTimeoutMs: 0 }), {
    code: "INVALID_ARGUMENT",
    path: "embedTimeoutMs",
    rule: "range",
  });
  const store = new MemoryStore({ embedder: async () => [] });
  try {
    await rejectsWithIssue(store.vectors!.nearest("x", { limit: 1001 }), {
      code: "INVALID_ARGUMENT",
      path: "limit",
      rule: "range",
    });
    await rejectsWithIssue(store.vectors!.nearest("x", { limit: 1, sessionIds: "a" as never }), {
      code: "INVALID_ARGUMENT",
      path: "sessionIds",
      rule: "type",
    });
    await rejectsWithIssue(store.vectors!.backfill({ retryFailed: "yes" as never }), {
      code: "INVALID_ARGUMENT",
      path: "retryFailed",
      rule: "type",
    });
  } finally {
    await store.close();
  }
});
