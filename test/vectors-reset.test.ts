// vectors.reset() for a new embedding model: it drops every vector table, trigger and state row on every backend, a
// message delete works right after it (by the store, and by a store opened without the embedder), the next use
// creates the tables again for the new model's size, and backfill embeds every message again. On SQLite a store
// opened after the vector table was dropped by hand drops the delete trigger left behind, so deletes work there too.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryStore } from "../src/memory/store.js";
import type { PostgresStore } from "../src/postgres/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { testVector } from "./vectors/embedder.js";
import { channel, describeTargets, seed, withEmbedded, withStorage } from "./vectors/helpers.js";
import { memoryEntries, type VectorStore } from "./vectors/targets.js";

/** The channel's tables, triggers and indexes left in the store's database (sqlite-vec's shadow tables among them). */
async function leftovers(store: VectorStore): Promise<string[]> {
  if (store instanceof MemoryStore) return [...memoryEntries(store).keys()].map(String);
  if (store instanceof SqliteStore) {
    return store.driver.column<string>(
      "SELECT name FROM sqlite_master WHERE name LIKE 'agent_message_vectors%' OR name = 'agent_vector_state'",
    );
  }
  const postgres = store as PostgresStore;
  const executor = await postgres.ready();
  const rows = await executor.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND (c.relname LIKE '%agent_message_vectors%' OR c.relname LIKE '%agent_vector_state%')`,
    [postgres.tables.schema ?? "public"],
  );
  return rows.map((row) => row.name);
}

/** Another model: 32 dimensions (the test embedder's 64 folded in half), so the stored vectors are of another size. */
const folded = async (texts: string[]) =>
  texts.map((text) => {
    const vector = testVector(text);
    return vector.slice(0, 32).map((x, i) => x + (vector[i + 32] as number));
  });

await describeTargets((target) => {
  test("reset drops the vectors; deletes work after it, and the next use embeds every message again", async () => {
    await withEmbedded(target.fresh, async (store, storage) => {
      await seed(store);
      const vectors = channel(store);
      await vectors.idle();
      assert.deepEqual(await vectors.status(), { embedded: 4, pending: 0 });
      assert.notDeepEqual(await leftovers(store), []);
      await vectors.reset();
      assert.deepEqual(await leftovers(store), []);
      await store.session("b").deleteMessages(["food"]);
      await store.session("b").clearMessages();
      await vectors.idle();
      assert.deepEqual(await vectors.status(), { embedded: 0, pending: 2 });
      assert.equal(vectors.index, target.index);
      assert.deepEqual(await vectors.backfill(), { embedded: 2, failed: 0 });
      const [best] = await vectors.nearestMessages("automobile", { limit: 1 });
      assert.deepEqual([best?.sessionId, best?.messageId], ["a", "car"]);
      await store.session("a").deleteMessages(["doc"]);
      await vectors.idle();
      assert.deepEqual(await vectors.status(), { embedded: 1, pending: 0 });
      if (target.index !== "memory") assert.equal(await storage.vectorRows(store), 1);
    });
  });

  test("after a reset a model of another size embeds every message, and a store without the embedder deletes", {
    skip: target.reopens ? false : "a MemoryStore cannot be reopened",
  }, async () => {
    await withStorage(target.fresh, async (storage) => {
      await withOpen(storage.open({ embedder: async (texts) => texts.map(testVector) }), async (old) => {
        await seed(old);
        await channel(old).backfill();
      });
      const errors: unknown[] = [];
      await withOpen(
        storage.open({ embedder: folded, onEmbedError: (e) => errors.push(e) }),
        async (store) => {
          const vectors = channel(store);
          // The old model's vectors are of another size: the new one's are refused until the reset.
          assert.deepEqual(await vectors.backfill({ retryFailed: true }), { embedded: 0, failed: 0 });
          await store
            .session("a")
            .appendMessage({ id: "van", role: "user", parts: [{ type: "text", text: "a van" }] });
          await vectors.idle();
          assert.match(String(errors.at(-1)), /32 dimensions, the store's are 64/);
          await vectors.reset();
          assert.deepEqual(await vectors.backfill(), { embedded: 5, failed: 0 });
          assert.deepEqual(await vectors.status(), { embedded: 5, pending: 0 });
          const [best] = await vectors.nearestMessages("automobile", { limit: 1 });
          assert.equal(best?.messageId, "car");
        },
      );
      await withOpen(storage.open({}), async (plain) => {
        await plain.session("b").deleteMessages(["food"]);
        assert.equal(await storage.vectorRows(plain), 4);
      });
    });
  });

  test("a store opened after the vector table was dropped by hand drops the delete trigger left behind", {
    skip: target.index.startsWith("sqlite")
      ? false
      : "SQLite only: Postgres drops the reference with the table",
  }, async () => {
    await withStorage(target.fresh, async (storage) => {
      await withOpen(storage.open({ embedder: async (texts) => texts.map(testVector) }), async (store) => {
        await seed(store);
        await channel(store).backfill();
      });
      await withOpen(storage.open({}), async (store) => {
        // As the docs once said to do for a new model (sqlite-vec's own table needs the extension to drop).
        (store as SqliteStore).driver.run("DROP TABLE agent_message_vectors");
        (store as SqliteStore).driver.run("DROP TABLE agent_vector_state");
      });
      await withOpen(storage.open({}), async (store) => {
        await store.session("b").deleteMessages(["food"]);
        assert.deepEqual(
          (await store.session("b").getHistory()).map((m) => m.id),
          ["music"],
        );
      });
    });
  });
});

/** Runs `body` on the store `opening` resolves to and closes it after, whatever happens. */
async function withOpen(
  opening: Promise<VectorStore>,
  body: (store: VectorStore) => Promise<void>,
): Promise<void> {
  const store = await opening;
  try {
    await body(store);
  } finally {
    await store.close();
  }
}
