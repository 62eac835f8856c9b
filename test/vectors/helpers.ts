// Shared pieces of the vector channel tests: a suite per target, the seeded texts, a store's channel, a storage's lifetime, waiting
// on background work, and a store whose embedder starts broken.
import assert from "node:assert/strict";
import { after, describe } from "node:test";
import type { StoreVectors } from "../../src/search/vectors/channel.js";
import { msg } from "../../src/testing/contract/harness.js";
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
export const TEXTS: Record<string, string> = {
  car: "I finally bought a new sedan yesterday",
  doc: "The physician said my knee heals well",
  music: "We went to a violin recital on Sunday",
  food: "Dinner was pasta with tomatoes",
};

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
