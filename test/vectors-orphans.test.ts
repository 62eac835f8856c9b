// A deleted message's vectors go with it on every backend: whichever process deletes it (the embedder's own, one
// opened without an embedder as the CLI's `prune` is), by a session delete, clearMessages or deleteMessages; and
// backfill removes what a delete made before that left behind. Left in sqlite-vec's index, such vectors crowd the
// live ones out of a store-wide nearest().
import assert from "node:assert/strict";
import { test } from "node:test";
import { SessionManager } from "../src/manager/manager.js";
import type { VectorBackend } from "../src/search/vectors/types.js";
import { msg } from "../src/testing/contract/harness.js";
import { testEmbedder } from "./vectors/embedder.js";
import { channel, describeTargets, importCrowd, seed, withEmbedded, withStorage } from "./vectors/helpers.js";
import { memoryEntries, type Storage, type VectorStore } from "./vectors/targets.js";

/** The messages left after {@link deleteSome}: none of the deleted ones is near "automobile" for nothing. */
const LIVE = ["car", "doc", "music"];

/**
 * seed() (a: car, doc; b: music, food), then "crowd": 31 messages nearer to "automobile" than any live one (more
 * than sqlite-vec's KNN reads for a limit of 5), and "gone": two messages.
 */
async function seedDoomed(store: VectorStore): Promise<void> {
  await seed(store);
  await importCrowd(store, 30);
  const gone = store.session("gone");
  await gone.appendMessage(msg("x", "sedan cars for sale"));
  await gone.appendMessage(msg("y", "a clinic for cars"));
  await channel(store).backfill();
  await channel(store).idle();
}

/** Deletes "crowd" (SessionManager.delete), clears "gone" and deletes "food" from "b": LIVE is what is left. */
async function deleteSome(store: VectorStore): Promise<void> {
  await new SessionManager(store).delete("crowd");
  await store.session("gone").clearMessages();
  await store.session("b").deleteMessages(["food"]);
}

/** The store's vectors are the live messages' only, and a store-wide nearest() answers them. */
async function assertLiveOnly(storage: Storage, store: VectorStore): Promise<void> {
  const hits = await storage.ids(store, await channel(store).nearest("automobile", { limit: 5 }));
  assert.deepEqual([...hits].sort(), [...LIVE].sort());
  assert.equal(hits[0], "car");
  assert.equal(await storage.indexRows(store), LIVE.length);
}

await describeTargets((target) => {
  test("deletes in the embedder's own process take the deleted messages' vectors", async () => {
    await withEmbedded(target.fresh, async (store, storage) => {
      await seedDoomed(store);
      assert.equal(await storage.indexRows(store), LIVE.length + 1 + 31 + 2);
      await deleteSome(store);
      await channel(store).idle();
      if (target.index !== "memory") assert.equal(await storage.vectorRows(store), LIVE.length);
      await assertLiveOnly(storage, store);
    });
  });

  test("deletes by a store without the embedder take the vectors in the same write", {
    skip: target.reopens ? false : "a MemoryStore cannot be reopened",
  }, async () => {
    await withStorage(target.fresh, async (storage) => {
      const embedded = await storage.open({ embedder: testEmbedder().embed });
      await seedDoomed(embedded);
      await embedded.close();
      const plain = await storage.open({});
      await deleteSome(plain);
      // Counted before any store with the embedder runs: the delete itself took them.
      assert.equal(await storage.vectorRows(plain), LIVE.length);
      await plain.close();
      const store = await storage.open({ embedder: testEmbedder().embed });
      try {
        await assertLiveOnly(storage, store);
        assert.equal(await storage.vectorRows(store), LIVE.length);
        assert.deepEqual(await channel(store).status(), { embedded: LIVE.length, pending: 0 });
      } finally {
        await store.close();
      }
    });
  });

  test("a delete by another store while the embedder's is open leaves its nearest() the live hits", {
    skip: target.reopens ? false : "a MemoryStore cannot be opened twice",
  }, async () => {
    await withEmbedded(target.fresh, async (store, storage) => {
      await seedDoomed(store);
      const plain = await storage.open({});
      try {
        await deleteSome(plain);
      } finally {
        await plain.close();
      }
      await assertLiveOnly(storage, store);
    });
  });

  test("a message deleted after its text was read for embedding gets no vector, and the batch still succeeds", async () => {
    await withStorage(target.fresh, async (storage) => {
      const { embed, state } = testEmbedder();
      state.broken = true;
      const store = await storage.open({ embedder: embed, onEmbedError: () => undefined });
      try {
        await seed(store);
        await channel(store).idle();
        state.broken = false;
        const backend = (channel(store) as unknown as { backend: VectorBackend }).backend;
        const rows = await backend.pending(0, 10);
        assert.equal(rows.length, 4);
        await store.session("b").deleteMessages(["food"]);
        await channel(store).embedRows(rows, new AbortController().signal, true);
        if (target.index !== "memory") assert.equal(await storage.vectorRows(store), 3);
        assert.equal(await storage.indexRows(store), 3);
        assert.deepEqual(await channel(store).status(), { embedded: 3, pending: 0 });
      } finally {
        await store.close();
      }
    });
  });

  test("backfill removes the vectors a delete made before them left behind", async () => {
    await withStorage(target.fresh, async (storage) => {
      let store = await storage.open({ embedder: testEmbedder().embed });
      try {
        await seedDoomed(store);
        if (target.reopens) {
          // A store whose vectors predate their removal with the message, deleted from by a process without them.
          await storage.unlinkVectors(store);
          await store.close();
          const plain = await storage.open({});
          await deleteSome(plain);
          await plain.close();
          store = await storage.open({ embedder: testEmbedder().embed });
          assert.equal(await storage.vectorRows(store), LIVE.length + 1 + 31 + 2);
        } else {
          // Memory: vectors whose rows are gone, put in beside them.
          await deleteSome(store);
          await channel(store).idle();
          const entries = memoryEntries(store);
          for (const seq of [1_000_001, 1_000_002])
            entries.set(seq, { sessionId: "crowd", text: "", textHash: "" });
        }
        assert.deepEqual(await channel(store).backfill({ batchSize: 2 }), { embedded: 0, failed: 0 });
        if (target.index !== "memory") assert.equal(await storage.vectorRows(store), LIVE.length);
        await assertLiveOnly(storage, store);
      } finally {
        await store.close();
      }
    });
  });
});
