// Moving a single-node store to a Citus cluster (docs/POSTGRES.md, "Moving a single-node store to a cluster"): a
// store made without `distributed` in the coordinator's database holds rows (a branch, an overlay, a payload shared
// by two sessions, registry rows, a block, a change log, a fact, a kept stream); opened once with `distributed: true`
// its tables are distributed, every row reads back as before, and writes go on.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { PostgresStore } from "../src/postgres/index.js";
import type { StoreVectors } from "../src/search/vectors/channel.js";
import { ids, msg, rejectsWithCode } from "../src/testing/contract/harness.js";
import { imageMessage, png } from "../src/testing/contract/media-harness.js";
import { citusPool, citusUnavailable } from "./fixtures/citus-db.js";
import { dropSchema } from "./fixtures/postgres-db.js";
import { testEmbedder } from "./vectors/embedder.js";

const SCHEMA = `agent_session_citus_move_${process.pid}`;
const unavailable = await citusUnavailable();

/** What a store holds, read the way an app reads it. */
async function snapshot(store: PostgresStore) {
  const a = store.session("a");
  const b = store.session("b");
  const hits = await store.searchMessages("migrated");
  return {
    history: JSON.stringify(await a.getHistory()),
    branch: ids(await a.getHistory("a2x")),
    siblings: ids(await a.getBranches("a1")),
    compactions: (await a.getCompactions()).map((c) => [c.summary, c.fromMessageId, c.toMessageId]),
    image: JSON.stringify(await b.getMessage("b0")),
    hits: hits.map((h) => `${h.sessionId}/${h.id}`).sort(),
    registry: (await store.registry.list()).map((s) => [s.id, s.name, s.owner ?? null]),
    block: await store.blocks.getBlock("notes"),
    tokens: await a.getContextTokens?.(),
    facts: (await store.facts.search({ owner: "ann" }, "migrated")).map((h) => [h.fact.id, h.fact.text]),
    stream: await store.streams.read("a", "answer", -1, 10),
  };
}

if (unavailable) {
  console.log(`Skipping the Citus move test: ${unavailable}`);
  test("citus move", { skip: unavailable }, () => undefined);
} else {
  const pool = citusPool();
  await dropSchema(pool, SCHEMA);
  after(async () => {
    await dropSchema(pool, SCHEMA);
    await pool.end();
  });

  test("a single-node store opened with distributed: true is distributed in place and reads back whole", async () => {
    const single = await PostgresStore.open(pool, { schema: SCHEMA, changeLog: true });
    await single.registry.create({ id: "a", name: "first", owner: "ann" });
    await single.registry.create({ id: "b", name: "second" });
    const a = single.session("a");
    for (let i = 0; i < 4; i++) await a.appendMessage(msg(`a${i}`, `migrated message ${i}`));
    await a.appendMessage(msg("a2x", "a migrated branch"), "a1");
    await a.addCompaction("the first two", "a0", "a1");
    const image = png(20_000, 7);
    await a.appendMessage(imageMessage("a4", image));
    await single.session("b").appendMessage(imageMessage("b0", image));
    await single.session("b").appendMessage(msg("b1", "migrated too"));
    await single.blocks.setBlock("notes", "kept");
    const source = { sessionId: "a", messageId: "a0" };
    await single.facts.add({ owner: "ann" }, [
      { id: "f", text: "Ann migrated.", observedAt: 1, sources: [source], producer: "function:t" },
    ]);
    await single.streams.start("a", "answer", 1);
    await single.streams.append("a", "answer", [{ seq: 0, chunk: "a migrated answer" }], 2);
    const before = await snapshot(single);
    await single.close();

    const store = await PostgresStore.open(pool, { schema: SCHEMA, distributed: true, changeLog: true });
    const { rows } = await pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_dist_partition WHERE logicalrelid::text LIKE $1",
      [`${SCHEMA}.%`],
    );
    assert.equal(
      rows[0]?.n,
      19,
      "heads, messages, overlays, links, registry, blocks, entries, payloads, kept streams and their chunks, facts, their sources, learn marks, a thread's checkpoints, values and writes, graph items; key checks and rotations (reference)",
    );
    assert.deepEqual(await snapshot(store), before);
    assert.equal((await store.attachments.stats()).count, 1, "the shared payload is stored once");

    // Writes go on: an append after the moved leaf, an append on the branch, an erasure that frees nothing shared.
    await store.session("a").appendMessage(msg("a5", "after the move"));
    assert.deepEqual(ids(await store.session("a").getHistory()).slice(-2), ["a4", "a5"]);
    await store.session("a").appendMessage(msg("a3x", "on the branch"), "a2x");
    // The overlay of a0..a1 reads in their place.
    assert.deepEqual(ids(await store.session("a").getHistory("a3x")).slice(1), ["a2x", "a3x"]);
    const erased = await store.registry.erase("b");
    assert.equal(erased?.attachments, 0, "session a still links the payload");
    assert.equal(
      JSON.stringify(await store.session("a").getMessage("a4")),
      JSON.stringify(imageMessage("a4", image)),
    );
    await store.close();

    // The moved tables are the cluster's now: the single-node statements are refused on them.
    await rejectsWithCode(PostgresStore.open(pool, { schema: SCHEMA }), "INVALID_ARGUMENT");
  });

  test("a single-node store's vectors move with it: keyed by session, distributed beside the messages, kept", async () => {
    const schema = `${SCHEMA}_vectors`;
    await dropSchema(pool, schema);
    after(() => dropSchema(pool, schema));
    const { embed, state } = testEmbedder();
    const single = await PostgresStore.open(pool, { schema, embedder: embed });
    await single.session("a").appendMessage(msg("car", "I drive a car to work"));
    await single.session("b").appendMessage(msg("tea", "Green tea in the morning"));
    await (single.vectors as StoreVectors).backfill();
    const embedded = state.texts;
    await single.close();

    const store = await PostgresStore.open(pool, { schema, distributed: true, embedder: embed });
    try {
      const vectors = store.vectors as StoreVectors;
      const status = await vectors.status();
      assert.deepEqual([status.embedded, status.pending], [2, 0]);
      const near = await vectors.nearestMessages("automobile", { limit: 1 });
      assert.deepEqual(
        near.map((n) => [n.sessionId, n.messageId]),
        [["a", "car"]],
      );
      assert.equal(state.texts, embedded + 1, "only the query was embedded: the moved vectors were kept");
      const { rows } = await pool.query(
        `SELECT count(DISTINCT colocationid)::int AS groups, count(*)::int AS n FROM pg_dist_partition
         WHERE logicalrelid IN (to_regclass($1), to_regclass($2))`,
        [`"${schema}".agent_message_vectors`, `"${schema}".agent_messages`],
      );
      assert.deepEqual(rows[0], { groups: 1, n: 2 });
      await pool.query(`DELETE FROM "${schema}".agent_messages WHERE session_id = 'b'`);
      const left = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".agent_message_vectors`);
      assert.equal(left.rows[0].n, 1, "a deleted message takes its vector with it");
    } finally {
      await store.close();
    }
  });
}
