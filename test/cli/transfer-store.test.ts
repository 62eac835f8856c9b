// The transfer contract on every backend that has it: memory and SQLite here, Postgres once it implements
// `store.transfer` (skipped with a printed reason until then, or when no server answers).
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { MemoryStore } from "../../src/memory/store.js";
import { PostgresStore } from "../../src/postgres/index.js";
import type { SqlValue } from "../../src/sqlite/driver.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { hasTransfer } from "../../src/store/types.js";
import { dropSchema, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { collect, importAll, runTransferContract, seedRich } from "./transfer-contract.js";

// Every await happens before any test is registered: the runner starts registered tests while the module is
// still evaluating, and a pool ended by a hook must not be in use by a probe still running.
async function postgresSkipReason(): Promise<string | null> {
  const unavailable = await postgresUnavailable();
  if (unavailable) return unavailable;
  const pool = testPool(1);
  // Per process, so two runs of this file (or of the whole suite) at once never share a schema.
  const schema = `agent_session_test_transfer_probe_${process.pid}`;
  try {
    const probe = await PostgresStore.open(pool, { schema });
    const supported = hasTransfer(probe);
    await probe.close();
    await dropSchema(pool, schema);
    return supported
      ? null
      : "PostgresStore has no store.transfer yet (see SessionTransfer in src/store/types.ts)";
  } finally {
    await pool.end();
  }
}
const skipPostgres = await postgresSkipReason();

runTransferContract({ name: "memory", create: async () => new MemoryStore() });
runTransferContract({ name: "sqlite", create: async () => new SqliteStore(":memory:") });

// An index walk in key order that stops at a LIMIT (SCAN … USING INDEX) is how keyset pages start; a table scan is not.
test("sqlite: every transfer statement reads through an index, never a full table scan", async () => {
  const store = new SqliteStore(":memory:");
  await seedRich(store);
  const statements = new Map<string, readonly SqlValue[]>();
  const driver = store.driver;
  const all = driver.all.bind(driver);
  const get = driver.get.bind(driver);
  driver.all = ((sql: string, params: readonly SqlValue[] = []) => {
    statements.set(sql, params);
    return all(sql, params);
  }) as typeof driver.all;
  driver.get = ((sql: string, params: readonly SqlValue[] = []) => {
    statements.set(sql, params);
    return get(sql, params);
  }) as typeof driver.get;
  const data = await collect(store);
  for await (const id of store.transfer.sessionIds()) await store.transfer.footprint(id);
  await importAll(store, data);
  driver.all = all;
  driver.get = get;
  assert.ok(statements.size >= 10, `saw ${statements.size} statements`);
  for (const [sql, params] of statements) {
    if (!/^\s*(SELECT|INSERT|UPDATE|WITH)/i.test(sql)) continue;
    const plan = driver.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params).map((r) => r.detail);
    const scans = plan.filter((d) => /^SCAN /.test(d) && !/USING (COVERING )?INDEX|json_each/.test(d));
    assert.deepEqual(scans, [], `${sql.replace(/\s+/g, " ")}\n${plan.join("\n")}`);
  }
  await store.close();
});

if (skipPostgres) {
  console.log(`Skipping the Postgres transfer contract: ${skipPostgres}`);
  test("transfer contract: postgres", { skip: skipPostgres }, () => undefined);
} else {
  const pool = testPool();
  // Each store gets its own schema, so the copy made inside a test starts empty too.
  let n = 0;
  const schemas = new Set<string>();
  runTransferContract({
    name: "postgres",
    create: async () => {
      const schema = `agent_session_test_transfer_${process.pid}_${n++}`;
      schemas.add(schema);
      await dropSchema(pool, schema);
      return PostgresStore.open(pool, { schema });
    },
  });
  after(async () => {
    for (const schema of schemas) await dropSchema(pool, schema);
    await pool.end();
  });
}
