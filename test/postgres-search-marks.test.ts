// Postgres reads a search's overlay marks in two steps (the newest few overlays, then older ones for hits those
// leave unmarked). An overlay removed between the two reads must not hide an older one from the second.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PostgresStore } from "../src/postgres/store.js";
import type { Executor, Query } from "../src/sql/engines/postgres/client.js";
import { msg } from "../src/testing/contract/harness.js";
import { citusSchema } from "./fixtures/citus-db.js";
import { newPGlite } from "./fixtures/pglite.js";
import { pgliteSwitchedOff } from "./fixtures/postgres-db.js";

// The cluster's schema first, before any test is registered: a root-level `after` added once the earlier tests
// have finished would run at once and drop it under the cluster's tests.
const cluster = await citusSchema("search_marks");

/** The case on an empty `store`. */
async function overlayRemovedBetweenReads(store: PostgresStore): Promise<void> {
  const s = store.session("s");
  for (let i = 0; i < 20; i++) await s.appendMessage(msg(`m${i}`, i === 1 ? "the topic" : `note ${i}`));
  const old = (await s.addCompaction("the start", "m0", "m2")).id;
  // Eight newer overlays, as many as the first read takes, none covering m1.
  const newer: string[] = [];
  for (let k = 0; k < 8; k++)
    newer.push((await s.addCompaction(`later ${k}`, `m${10 + k}`, `m${11 + k}`)).id);
  const executor: Executor = await store.ready();
  const { query } = executor;
  let removed = false;
  executor.query = (async (sql: string, params?: readonly unknown[], prepared?: boolean) => {
    const rows = await query(sql, params, prepared);
    if (!removed && sql.includes("CROSS JOIN LATERAL") && sql.includes("agent_compactions")) {
      removed = true;
      await query(`DELETE FROM ${store.tables.compactions} WHERE id = $1`, [newer[7]]);
    }
    return rows;
  }) as Query;
  const hits = await store.searchMessages("topic", { sessionId: "s" });
  executor.query = query;
  assert.ok(removed, "the overlay reads ran");
  assert.deepEqual(
    hits.map((hit) => [hit.id, hit.compactedBy]),
    [["m1", old]],
  );
}

test("an overlay removed between the two overlay reads leaves the older one that covers a hit found", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  const store = await PostgresStore.open(db);
  try {
    await overlayRemovedBetweenReads(store);
  } finally {
    await store.close();
    await db.close();
  }
});

if (cluster) {
  test("citus: an overlay removed between the two overlay reads leaves the older one that covers a hit found", () =>
    overlayRemovedBetweenReads(cluster.store()));
}
