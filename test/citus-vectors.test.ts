// The vector channel on a Citus cluster (docs/POSTGRES.md, "Limits on a cluster"): the vector table is distributed
// by session beside the messages, a session's nearest read and each vector write run on its shard. The vector
// tests' other cases run on the cluster through test/vectors/targets.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { PostgresStore } from "../src/postgres/index.js";
import type { PostgresStoreOptions } from "../src/postgres/schema.js";
import type { StoreVectors } from "../src/search/vectors/channel.js";
import { msg } from "../src/testing/contract/harness.js";
import { citusSchema } from "./fixtures/citus-db.js";
import { plansOf as coordinatorPlans, taskCounts } from "./fixtures/citus-plans.js";
import { testEmbedder } from "./vectors/embedder.js";

const cluster = await citusSchema("vectors");

if (!cluster) {
  test("citus: vectors", { skip: "no Citus cluster (the reason is printed above)" }, () => undefined);
} else {
  const { pool, schema } = cluster;
  /** The coordinator's plans of what `run` sends to a store on this file's schema (`extra` beside its options). */
  const plansOf = (run: (store: PostgresStore) => Promise<void>, extra: PostgresStoreOptions = {}) =>
    coordinatorPlans(pool, { schema, distributed: true, ...extra }, run);

  describe("citus: vectors", () => {
    test("the vector table is distributed by session beside the messages, and the channel finds by meaning", async () => {
      await cluster.reset();
      const { embed } = testEmbedder();
      const store = cluster.store({ embedder: embed });
      try {
        await store.session("va").appendMessage(msg("car", "I drive a car to work"));
        await store.session("vb").appendMessage(msg("tea", "Green tea in the morning"));
        const vectors = store.vectors as StoreVectors;
        await vectors.backfill();
        assert.equal((await vectors.status()).pending, 0);
        const near = await vectors.nearestMessages("automobile", { limit: 1 });
        assert.deepEqual(
          near.map((n) => [n.sessionId, n.messageId]),
          [["va", "car"]],
        );
        const scoped = await vectors.nearestMessages("automobile", { limit: 5, sessionId: "vb" });
        assert.deepEqual(
          scoped.map((n) => n.messageId),
          ["tea"],
        );
        const { rows } = await pool.query(
          `SELECT count(DISTINCT colocationid)::int AS groups, count(*)::int AS n FROM pg_dist_partition
         WHERE logicalrelid IN (to_regclass($1), to_regclass($2))`,
          [`"${cluster.schema}".agent_message_vectors`, cluster.tables.messages],
        );
        assert.deepEqual(rows[0], { groups: 1, n: 2 });
        // A deleted message takes its vector with it (the reference names the session and seq).
        await pool.query(`DELETE FROM ${cluster.tables.messages} WHERE session_id = 'va'`);
        const left = await pool.query(
          `SELECT count(*)::int AS n FROM "${cluster.schema}".agent_message_vectors`,
        );
        assert.equal(left.rows[0].n, 1);
        // A nearest read of one session runs on its shard: every statement one task, no subplan.
        const plans = await plansOf(
          async (s) => {
            const near = await (s.vectors as StoreVectors).nearestMessages("tea", {
              limit: 3,
              sessionId: "vb",
            });
            assert.deepEqual(
              near.map((n) => n.messageId),
              ["tea"],
            );
            await s.close();
          },
          { embedder: embed },
        );
        // A vector write names its session: each one runs on the session's shard.
        // Appended by a store without an embedder, so that this store's channel does not embed it first.
        await cluster.store().session("vc").appendMessage(msg("bus", "I take the bus"));
        const writes = await plansOf(
          async (s) => {
            await (s.vectors as StoreVectors).backfill();
            await s.close();
          },
          { embedder: embed },
        );
        const inserts = writes.filter((plan) => /Insert on agent_message_vectors/.test(plan));
        assert.ok(inserts.length > 0, writes.join("\n---\n"));
        for (const plan of inserts) assert.deepEqual(taskCounts(plan), [1], plan);
        const reads = plans.filter((plan) => /agent_message_vectors/.test(plan));
        assert.ok(reads.length > 0, plans.join("\n---\n"));
        for (const plan of reads) {
          assert.deepEqual(taskCounts(plan), [1], plan);
          assert.doesNotMatch(plan, /Distributed Subplan/, plan);
        }
      } finally {
        await store.close();
      }
    });
  });
}
