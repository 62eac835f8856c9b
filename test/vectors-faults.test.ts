// Faults of the embedder the vector channel must survive, on every backend with vectors: an embedder that stops
// answering (searches answer from text alone; close() releases them), and one that refuses one text (the rest of
// its batch and later writes are still embedded; the refusal is recorded, not retried until the text changes).
import assert from "node:assert/strict";
import { test } from "node:test";
import { PostgresStore } from "../src/postgres/store.js";
import { embedText, MAX_EMBED_BYTES } from "../src/search/vectors/embed.js";
import type { Embedder } from "../src/search/vectors/types.js";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { msg } from "../src/testing/contract/harness.js";
import { newPGlite } from "./fixtures/pglite.js";
import { pgliteSwitchedOff } from "./fixtures/postgres-db.js";
import { testVector } from "./vectors/embedder.js";
import { channel, describeTargets, seed, TEXTS, until, withStorage } from "./vectors/helpers.js";

/** A real embedder that refuses any text holding "POISON" (as a model refuses a text over its token limit). */
function refusingEmbedder(): {
  embed: Embedder;
  state: { hang: boolean; calls: number; sent: string[] };
} {
  const state = { hang: false, calls: 0, sent: [] as string[] };
  const embed = async (texts: string[]) => {
    state.calls++;
    state.sent.push(...texts);
    if (state.hang) return new Promise<number[][]>(() => undefined);
    const poisoned = texts.find((text) => text.includes("POISON"));
    if (poisoned !== undefined) throw new Error(`input too long: ${poisoned.length} tokens`);
    return texts.map(testVector);
  };
  return { embed, state };
}

// Long enough that a hang, not the deadline, is what a test without the fix meets.
const NEVER = 2_147_483_647;

await describeTargets((target) => {
  test("an embedder that never answers: a search answers from text within the deadline, reported", async () => {
    await withStorage(target.fresh, async (storage) => {
      const { embed, state } = refusingEmbedder();
      const errors: unknown[] = [];
      const store = await storage.open({
        embedder: embed,
        queryEmbedTimeoutMs: 50,
        onEmbedError: (error) => errors.push(error),
      });
      try {
        await seed(store);
        await channel(store).idle();
        state.hang = true;
        const hits = await store.searchMessages("sedan automobile", { sessionId: "a" });
        assert.deepEqual(
          hits.map((hit) => hit.id),
          ["car"],
        );
        assert.equal(errors.length, 1);
        assert.equal((errors[0] as Error).name, "TimeoutError");
        assert.match((await channel(store).status()).lastError ?? "", /did not answer within 50 ms/);
      } finally {
        await store.close();
      }
    });
  });

  test("close() releases a search waiting for its query's embedding", { timeout: 60_000 }, async () => {
    await withStorage(target.fresh, async (storage) => {
      const { embed, state } = refusingEmbedder();
      const store = await storage.open({
        embedder: embed,
        queryEmbedTimeoutMs: NEVER,
        onEmbedError: () => {},
      });
      await seed(store);
      await channel(store).idle();
      state.hang = true;
      const calls = state.calls;
      const search = store.searchMessages("sedan automobile");
      await until(() => state.calls > calls);
      await store.close();
      await assert.rejects(search, { code: "CLOSED" });
    });
  });

  test("a refused text is recorded by itself; the rest of its batch and later writes are embedded", async () => {
    await withStorage(target.fresh, async (storage) => {
      const { embed, state } = refusingEmbedder();
      const errors: unknown[] = [];
      const store = await storage.open({ embedder: embed, onEmbedError: (error) => errors.push(error) });
      try {
        const vectors = channel(store);
        const a = store.session("a");
        await a.appendMessage(msg("car", TEXTS.car));
        await a.appendMessage(msg("bad", "POISON pill"));
        await a.appendMessage(msg("doc", TEXTS.doc));
        await store.session("b").appendMessage(msg("music", TEXTS.music));
        await vectors.idle();
        const status = await vectors.status();
        assert.deepEqual(
          { ...status, lastError: undefined },
          {
            embedded: 3,
            pending: 0,
            failed: 1,
            failures: [{ sessionId: "a", messageId: "bad", reason: "input too long: 11 tokens" }],
            lastError: undefined,
          },
        );
        assert.ok(
          errors.some((error) => /refused the text of message row \d+: input too long/.test(String(error))),
        );
        assert.deepEqual(await storage.ids(store, await vectors.nearest("physician", { limit: 1 })), ["doc"]);
        // Recorded: neither a later write nor a backfill sends it again.
        const sent = state.sent.length;
        await store.session("b").appendMessage(msg("food", TEXTS.food));
        await vectors.idle();
        assert.deepEqual(await vectors.backfill(), { embedded: 0, failed: 0 });
        assert.deepEqual(state.sent.slice(sent), [TEXTS.food]);
        // A new text is embedded again.
        await a.updateMessage(msg("bad", "Booked a clinic visit for Monday"));
        await vectors.idle();
        assert.deepEqual(await vectors.status(), { embedded: 5, pending: 0 });
      } finally {
        await store.close();
      }
    });
  });

  test("backfill isolates a refused text, counts it failed, and retries it only when asked", {
    skip: target.reopens ? false : "a MemoryStore cannot be reopened with an embedder",
  }, async () => {
    await withStorage(target.fresh, async (storage) => {
      const plain = await storage.open({});
      await seed(plain);
      await plain.session("a").appendMessage(msg("bad", "POISON pill"));
      await plain.session("b").appendMessage(msg("late", "The violin case is blue"));
      await plain.close();
      const { embed, state } = refusingEmbedder();
      const store = await storage.open({ embedder: embed, onEmbedError: () => {} });
      try {
        const vectors = channel(store);
        assert.deepEqual(await vectors.backfill({ batchSize: 64 }), { embedded: 5, failed: 1 });
        const status = await vectors.status();
        assert.equal(status.pending, 0);
        assert.equal(status.failed, 1);
        assert.deepEqual(await storage.ids(store, await vectors.nearest("blue violin case", { limit: 1 })), [
          "late",
        ]);
        const sent = state.sent.length;
        assert.deepEqual(await vectors.backfill(), { embedded: 0, failed: 0 });
        assert.equal(state.sent.length, sent, "a recorded refusal is not sent again");
        // Alone in its batch, it is refused again only because the embedder still answers a probe.
        assert.deepEqual(await vectors.backfill({ retryFailed: true }), { embedded: 0, failed: 1 });
        assert.deepEqual(state.sent.slice(sent), ["POISON pill", "probe"]);
        assert.equal((await vectors.status()).failed, 1);
      } finally {
        await store.close();
      }
    });
  });
});

test("embedText keeps the first 8,000 UTF-8 bytes, cut between characters", () => {
  const emoji = "😀".repeat(8_000);
  const cjk = "漢".repeat(8_000);
  for (const text of [emoji, cjk, `a${emoji}`]) {
    const cut = embedText(text);
    assert.ok(Buffer.byteLength(cut) <= MAX_EMBED_BYTES, `${Buffer.byteLength(cut)} bytes`);
    assert.ok(Buffer.byteLength(cut) > MAX_EMBED_BYTES - 4);
    assert.ok((cut as unknown as { isWellFormed(): boolean }).isWellFormed(), "no half of a surrogate pair");
    assert.ok(text.startsWith(cut));
  }
  assert.equal(embedText("x".repeat(20_000)).length, 8_000);
  assert.equal(embedText("short"), "short");
});

// A vector table made before refusals were recorded has no `failure` column: the channel's first use adds it.
test("a vector table without the failure column gains it on first use (SQLite, PGlite)", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const old = `(seq bigint PRIMARY KEY, session_num bigint NOT NULL, content_hash text, text_hash text NOT NULL,
    vector float4[])`;
  const check = async (store: SqliteStore | PostgresStore) => {
    const { embed } = refusingEmbedder();
    await seed(store);
    await store.session("a").appendMessage(msg("bad", "POISON pill"));
    await store.close();
    return embed;
  };
  const db = new (loadBetterSqlite3())(":memory:");
  try {
    db.exec(`CREATE TABLE agent_message_vectors ${old.replace("float4[]", "BLOB")}`);
    const embed = await check(new SqliteStore(db));
    const store = new SqliteStore(db, { embedder: embed, vectorIndex: "plain", onEmbedError: () => {} });
    assert.deepEqual(await channel(store).backfill(), { embedded: 4, failed: 1 });
    assert.equal((await channel(store).status()).failed, 1);
    await store.close();
  } finally {
    db.close();
  }
  const pglite = await newPGlite();
  try {
    await pglite.query("CREATE SCHEMA legacy");
    await pglite.query(`CREATE TABLE legacy.agent_message_vectors ${old}`);
    const embed = await check(await PostgresStore.open(pglite, { schema: "legacy" }));
    const store = await PostgresStore.open(pglite, {
      schema: "legacy",
      embedder: embed,
      onEmbedError: () => {},
    });
    assert.deepEqual(await channel(store).backfill(), { embedded: 4, failed: 1 });
    assert.equal((await channel(store).status()).failed, 1);
    await store.close();
  } finally {
    await pglite.close();
  }
});
