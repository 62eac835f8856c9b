// A purge's VACUUM FULL (rewrite mode) and VACUUM ("vacuum" mode) of a distributed table, bounded on the Citus
// workers (src/sql/purge/postgres-vacuum.ts): a transaction on a worker holding the lock of a messages shard makes
// the step incomplete, naming the table, instead of a worker's VACUUM that waits for it (and, for VACUUM FULL,
// queues every append to that shard behind it). Skipped, with the reason printed, without a cluster.
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { SessionManager } from "../src/index.js";
import type { PostgresPurgeMode } from "../src/postgres/index.js";
import { CITUS_URL, citusSchema } from "./fixtures/citus-db.js";
import { purgeUntilComplete } from "./helpers/purge.js";

const cluster = await citusSchema("vacuum_workers");

/** A text message. */
const message = (id: string) => ({ id, role: "user" as const, parts: [{ type: "text" as const, text: id }] });

/**
 * A client on the worker holding `sessionId`'s messages shard, and that shard's name: the store's messages table
 * is distributed by the session id.
 */
async function shardWorker(sessionId: string): Promise<{ worker: pg.Client; shard: string }> {
  const { rows } = await cluster!.pool.query<{ host: string; port: number; shard: string }>(
    `SELECT n.nodename AS host, n.nodeport AS port, shard_name(s.logicalrelid, s.shardid) AS shard
       FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) JOIN pg_dist_node n USING (groupid)
      WHERE s.shardid = get_shard_id_for_distribution_column($1::regclass, $2::text)`,
    [cluster!.tables.messages, sessionId],
  );
  const url = new URL(CITUS_URL);
  url.hostname = rows[0]!.host;
  url.port = String(rows[0]!.port);
  const worker = new pg.Client({ connectionString: url.toString() });
  await worker.connect();
  return { worker, shard: rows[0]!.shard };
}

/** The lock each mode's worker-side VACUUM waits for: any lock for VACUUM FULL, one that conflicts for VACUUM. */
const HELD: Record<PostgresPurgeMode, (shard: string) => string> = {
  rewrite: (shard) => `SELECT count(*) FROM ${shard}`,
  vacuum: (shard) => `LOCK TABLE ${shard} IN SHARE UPDATE EXCLUSIVE MODE`,
};

for (const mode of ["rewrite", "vacuum"] as const) {
  test(`citus purge (${mode}): a lock held on a worker's shard makes the table's VACUUM incomplete, not a wait`, {
    skip: cluster ? false : "no Citus cluster",
    timeout: 120_000,
  }, async () => {
    await cluster!.reset();
    const store = cluster!.store();
    const manager = new SessionManager(store);
    const session = await manager.create("held");
    await manager.append(session.id, message("m0"));
    const { worker, shard } = await shardWorker(session.id);
    let open = false;
    try {
      // Citus refuses a shard's lock taken by hand unless manual changes to shards are allowed.
      await worker.query("SET citus.enable_manual_changes_to_shards TO on");
      await worker.query("BEGIN");
      open = true;
      await worker.query(HELD[mode](shard));
      const report = await store.purge({ mode, lockTimeoutMs: 300 });
      const action = mode === "rewrite" ? "VACUUM FULL" : "VACUUM";
      const step = report.steps.find((s) => s.action === action && s.target === cluster!.tables.messages);
      assert.equal(report.complete, false);
      assert.match(
        step?.incomplete ?? "",
        new RegExp(`^not complete: the ${action} on the coordinator and the shard placements did not finish`),
        JSON.stringify(report),
      );
      // Nothing of the purge is left waiting on the worker: an append to the held shard goes through while the
      // lock is still held (behind a waiting VACUUM FULL it would queue until the test's timeout).
      await manager.append(session.id, message("m1"));
      const { rows } = await worker.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query ILIKE 'VACUUM%' AND wait_event_type = 'Lock'",
      );
      assert.equal(rows[0]?.n, 0);
      await worker.query("ROLLBACK");
      open = false;
      const done = await purgeUntilComplete(() => store.purge({ mode, lockTimeoutMs: 5_000 }));
      assert.equal(
        done.steps.find((s) => s.action === action && s.target === cluster!.tables.messages)?.incomplete,
        undefined,
        JSON.stringify(done),
      );
    } finally {
      if (open) await worker.query("ROLLBACK");
      await worker.end();
    }
  });
}
