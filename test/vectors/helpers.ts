// Shared pieces of the vector channel tests: a suite per target, the seeded texts, a store's channel, a storage's lifetime, waiting
// on background work, a store whose embedder starts broken, and counting a store's nearest-neighbour reads.
import assert from "node:assert/strict";
import { after, describe } from "node:test";
import type { TransferItem } from "../../src/contract/transfer.js";
import { MemoryStore } from "../../src/memory/store.js";
import { PostgresStore } from "../../src/postgres/store.js";
import type { StoreVectors } from "../../src/search/vectors/channel.js";
import type { VectorBackend } from "../../src/search/vectors/types.js";
import type { Query } from "../../src/sql/engines/postgres/client.js";
import { msg, toAsync } from "../../src/testing/contract/harness.js";
import { testEmbedder } from "./embedder.js";
import { closeTargets, type Storage, type VectorStore, type VectorTarget, vectorTargets } from "./targets.js";

/** Declares a suite of `body`'s tests on every vector target, skipped (the reason printed) where one cannot run. */
export async function describeTargets(body: (target: VectorTarget) => void): Promise<void> {
  const targets = await vectorTargets();
  after(closeTargets);
  for (const target of targets) {
    describe(`vectors: ${target.name}`, { skip: target.skip }, () => {
      if (target.skip) console.log(`Skipping vectors on ${target.name}: ${target.skip}`);
      body(target);
    });
  }
}

/** The seeded texts: no two share a word, so only meaning links a query to its message. */
export const TEXTS = {
  car: "I finally bought a new sedan yesterday",
  doc: "The physician said my knee heals well",
  music: "We went to a violin recital on Sunday",
  food: "Dinner was pasta with tomatoes",
} satisfies Record<string, string>;

/** The store's vector channel, asserting it has one. */
export function channel(store: VectorStore): StoreVectors {
  assert.ok(store.vectors, "the store has a vector channel");
  return store.vectors;
}

/** Runs `body` on a fresh storage and disposes of the storage after, whatever happens. */
export async function withStorage(
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

/** Runs `body` on a store of a fresh storage opened with the test embedder; closes both after, whatever happens. */
export async function withEmbedded(
  fresh: () => Promise<Storage>,
  body: (store: VectorStore, storage: Storage) => Promise<void>,
): Promise<void> {
  await withStorage(fresh, async (storage) => {
    const store = await storage.open({ embedder: testEmbedder().embed });
    try {
      await body(store, storage);
    } finally {
      await store.close();
    }
  });
}

/** Waits until `check` holds, polling every 20 ms, and fails after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  for (const start = Date.now(); !(await check()); ) {
    if (Date.now() - start > ms) throw new Error("timed out waiting for the background work");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Appends the four TEXTS: car (user) and doc (assistant) in session "a", music and food in session "b". */
export async function seed(store: VectorStore): Promise<void> {
  const a = store.session("a");
  await a.appendMessage(msg("car", TEXTS.car));
  await a.appendMessage(msg("doc", TEXTS.doc, "assistant"));
  const b = store.session("b");
  await b.appendMessage(msg("music", TEXTS.music));
  await b.appendMessage(msg("food", TEXTS.food));
}

/** Opens a store whose embedder starts broken; `errors` collects what onEmbedError reports. */
export async function openBroken(storage: Storage): Promise<{
  store: VectorStore;
  state: ReturnType<typeof testEmbedder>["state"];
  errors: unknown[];
}> {
  const { embed, state } = testEmbedder();
  const errors: unknown[] = [];
  state.broken = true;
  const store = await storage.open({ embedder: embed, onEmbedError: (error) => errors.push(error) });
  return { store, state, errors };
}

/** Waits `ms` milliseconds (so that stored times fall on either side of a bound). */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Session "a" for the filter tests: "car" (user) far from "automobile", then 80 assistant turns nearer to it (more
 * than a search's vector candidates), then "van" (assistant), farther again. `before` and `after` are times between
 * the three groups: only "car" is a user's, or older than `before`; only "van" is newer than `after`.
 */
export async function seedCrowd(store: VectorStore): Promise<{ before: string; after: string }> {
  const a = store.session("a");
  await a.appendMessage(msg("car", TEXTS.car));
  await pause(20);
  const before = new Date().toISOString();
  await pause(20);
  for (let i = 0; i < 80; i++) await a.appendMessage(msg(`g${i}`, "sedan sedan cars", "assistant"));
  await pause(20);
  const after = new Date().toISOString();
  await pause(20);
  await a.appendMessage(msg("van", "The new sedan is parked outside today", "assistant"));
  return { before, after };
}

/**
 * Imports session `sessionId` (appends would take seconds): "car" (user, stored in 2020), then `count` assistant
 * turns of `text`, nearer to "automobile" than it, stored now.
 */
export async function importCrowd(
  store: VectorStore,
  count: number,
  { sessionId = "crowd", text = "sedan sedan cars parked" } = {},
): Promise<void> {
  const message = (id: string, text: string, role: string, parentId: string | null, createdAt: string) => ({
    kind: "message" as const,
    message: { id, parentId, role, createdAt, content: JSON.stringify(msg(id, text, role)) },
  });
  const now = new Date().toISOString();
  const items: TransferItem[] = [
    { kind: "session", session: { id: sessionId, info: null, leafId: `g${count - 1}` } },
    message("car", TEXTS.car, "user", null, "2020-01-01T00:00:00.000Z"),
    ...Array.from({ length: count }, (_, i) =>
      message(`g${i}`, text, "assistant", i === 0 ? "car" : `g${i - 1}`, now),
    ),
  ];
  await store.transfer.importSession(toAsync(items));
}

/**
 * How many nearest-neighbour reads `body` makes of `store`'s vectors: the statements that read the vector table on
 * SQLite and Postgres, the backend's nearest() calls on memory (each one pass over the rows; it never reads again).
 */
export async function vectorReads(store: VectorStore, body: () => Promise<unknown>): Promise<number> {
  let reads = 0;
  const count = (sql: string) => {
    if (/agent_message_vectors\b/.test(sql)) reads++;
  };
  if (store instanceof MemoryStore) {
    const backend = (channel(store) as unknown as { backend: VectorBackend }).backend;
    const { nearest } = backend;
    backend.nearest = (...args) => {
      reads++;
      return nearest.apply(backend, args);
    };
    try {
      await body();
    } finally {
      backend.nearest = nearest;
    }
    return reads;
  }
  if (store instanceof PostgresStore) {
    const executor = await store.ready();
    const { query, transaction } = executor;
    const counted =
      (run: Query): Query =>
      (sql, ...rest) => {
        count(sql);
        return run(sql, ...rest);
      };
    executor.query = counted(query);
    executor.transaction = (fn) => transaction((run) => fn(counted(run)));
    try {
      await body();
    } finally {
      executor.query = query;
      executor.transaction = transaction;
    }
    return reads;
  }
  const driver = store.driver;
  const methods = ["all", "column", "tuples", "get"] as const;
  const originals = methods.map((name) => driver[name]);
  for (const [i, name] of methods.entries()) {
    const original = originals[i] as (sql: string, params?: unknown) => unknown;
    (driver as unknown as Record<string, unknown>)[name] = (sql: string, params?: unknown) => {
      count(sql);
      return original.call(driver, sql, params);
    };
  }
  try {
    await body();
  } finally {
    for (const [i, name] of methods.entries())
      (driver as unknown as Record<string, unknown>)[name] = originals[i];
  }
  return reads;
}
