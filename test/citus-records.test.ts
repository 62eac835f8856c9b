// Migration 22 on a store already distributed on Citus: the record columns are added to the key- and
// label-sharded block and entry tables, the rows stored before are backfilled, and an erasure removes by record.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PostgresStore } from "../src/postgres/store.js";
import { citusPool, citusUnavailable } from "./fixtures/citus-db.js";
import { dropSchema } from "./fixtures/postgres-db.js";

const unavailable = await citusUnavailable();
if (unavailable) console.log(`# skipping migration 22 on Citus: ${unavailable}`);

test("migration 22 upgrades a distributed store and erases by record", {
  skip: unavailable ?? false,
}, async () => {
  const pool = citusPool(2);
  const schema = `citus_records_${process.pid}`;
  await dropSchema(pool, schema);
  try {
    const store = await PostgresStore.open(pool, { schema, distributed: true });
    await store.registry.create({ id: "s1", name: "s1" });
    await store.blocks.setBlock("memory_s1", "s1's block");
    await store.close();
    // The store as step 22 found it: no record columns, version 21.
    for (const table of ["agent_context_blocks", "agent_search_entries"]) {
      await pool.query(`ALTER TABLE "${schema}".${table} DROP COLUMN session_id, DROP COLUMN owner`);
    }
    await pool.query(`UPDATE "${schema}".agent_session_schema SET version = 21`);
    const again = await PostgresStore.open(pool, { schema, distributed: true });
    try {
      assert.deepEqual(await again.blocks.recordedKeys({ sessionId: "s1" }), ["memory_s1"]);
      await again.blocks.setBlock("other-key", "recorded for s1 too", { sessionId: "s1" });
      assert.equal((await again.registry.erase?.("s1"))?.blocks, 2);
      assert.equal(await again.blocks.getBlock("other-key"), null);
    } finally {
      await again.close();
    }
  } finally {
    await dropSchema(pool, schema);
    await pool.end();
  }
});
