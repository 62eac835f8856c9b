// The facts in the vector channel's status (docs/FACTS.md#recall): `status().facts` counts the facts embedded,
// waiting and refused beside the messages' counts, whose meaning is unchanged, on every vector target.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { FactCapableStore } from "../../src/contract/facts.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import { fact, ownedSession } from "../../src/testing/contract/facts-harness.js";
import { testEmbedder, testVector } from "../vectors/embedder.js";
import { channel, describeTargets, withStorage } from "../vectors/helpers.js";
import type { VectorStore } from "../vectors/targets.js";

type Store = VectorStore & FactCapableStore & RegistryCapableStore;

/** While `refuses.on`, refusing() refuses every text naming "xylophone" (as an embedder over its token limit would). */
const refuses = { on: true };

/** An embedder that refuses "xylophone" while `refuses.on`, embedding others as the test one. */
async function refusing(texts: string[]): Promise<number[][]> {
  if (refuses.on && texts.some((text) => text.includes("xylophone"))) throw new Error("input too long");
  return texts.map(testVector);
}

async function seedFacts(store: Store): Promise<void> {
  await ownedSession(store, "a", null, [
    "Guess what I got at the dealership today",
    "Tell me about your week",
  ]);
  await store.facts.add({ sessionId: "a" }, [
    fact("The user bought a new sedan.", [["a", "a-0"]]),
    fact("The user plays the xylophone.", [["a", "a-1"]]),
    fact("The user had a busy week.", [["a", "a-1"]]),
  ]);
}

await describeTargets((target) => {
  test("status() counts the facts embedded and refused beside the messages", async () => {
    await withStorage(target.fresh, async (storage) => {
      const errors: unknown[] = [];
      const store = (await storage.open({
        embedder: refusing,
        onEmbedError: (error) => errors.push(error),
      })) as Store;
      try {
        // A store without facts reports as it always did: no `facts`.
        assert.equal((await channel(store).status()).facts, undefined);
        await seedFacts(store);
        await channel(store).idle();
        const status = await channel(store).status();
        assert.deepEqual(status.facts, { embedded: 2, pending: 0, failed: 1 });
        // The messages' fields keep their meaning: the two turns, none refused.
        assert.equal(status.embedded, 2);
        assert.equal(status.pending, 0);
        assert.equal(status.failed, undefined);
        assert.ok(errors.some((error) => /refused the text of fact row \d+/.test(String(error))));
        // A reset forgets every fact vector: all wait again.
        await channel(store).reset();
        assert.deepEqual((await channel(store).status()).facts, { embedded: 0, pending: 3, failed: 0 });
      } finally {
        await store.close();
      }
    });
  });

  test("backfill({ retryFailed: true }) sends the refused facts again; a plain backfill does not", async () => {
    await withStorage(target.fresh, async (storage) => {
      refuses.on = true;
      const store = (await storage.open({ embedder: refusing, onEmbedError: () => undefined })) as Store;
      try {
        await seedFacts(store);
        await channel(store).idle();
        assert.deepEqual((await channel(store).status()).facts, { embedded: 2, pending: 0, failed: 1 });
        refuses.on = false;
        // A refusal is not sent again by itself: only retryFailed asks for it.
        await channel(store).backfill();
        assert.deepEqual((await channel(store).status()).facts, { embedded: 2, pending: 0, failed: 1 });
        await channel(store).backfill({ retryFailed: true });
        assert.deepEqual((await channel(store).status()).facts, { embedded: 3, pending: 0, failed: 0 });
      } finally {
        refuses.on = true;
        await store.close();
      }
    });
  });

  test("status() counts the facts stored before the embedder as pending until a backfill", async () => {
    if (!target.reopens) return;
    await withStorage(target.fresh, async (storage) => {
      const plain = (await storage.open({})) as Store;
      await seedFacts(plain);
      await plain.close();
      const store = (await storage.open({ embedder: testEmbedder().embed })) as Store;
      try {
        assert.deepEqual((await channel(store).status()).facts, { embedded: 0, pending: 3, failed: 0 });
        await channel(store).backfill();
        assert.deepEqual((await channel(store).status()).facts, { embedded: 3, pending: 0, failed: 0 });
      } finally {
        await store.close();
      }
    });
  });
});
