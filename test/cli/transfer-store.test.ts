// The transfer contract on memory and SQLite. Postgres runs it in test/postgres-transfer.test.ts (a pg Pool and
// PGlite, with the other Postgres tests: `npm test -- postgres`).
import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryStore } from "../../src/memory/store.js";
import type { SqlValue } from "../../src/sql/engines/sqlite/driver.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { collect, importAll, runTransferContract, seedRich } from "./transfer-contract.js";

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
