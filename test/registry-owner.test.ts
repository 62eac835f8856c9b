// An owner's list, and the owner's session ids a search keeps to, read a range of the partial index
// agent_sessions_owner (owner, updated_at DESC, activity DESC) on SQLite and Postgres, so other owners' rows (and
// unowned ones) are never read; stores made before owners gain the column and index on open. Proven by query plans
// (generic ones on Postgres, as prepared statements get), not by time.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { PostgresStore } from "../src/postgres/index.js";
import { migrate as migratePostgres, POSTGRES_MIGRATIONS } from "../src/postgres/schema.js";
import { openExecutor } from "../src/sql/engines/postgres/client.js";
import { type Tables, tableNames } from "../src/sql/engines/postgres/tables.js";
import { openSqlite } from "../src/sql/engines/sqlite/open.js";
import { listOwnerSql } from "../src/sql/registry/postgres.js";
import { migrate, SQLITE_MIGRATIONS } from "../src/sqlite/schema.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { ids } from "../src/testing/contract/harness.js";
import { dropSchema, type Runner } from "./fixtures/postgres-db.js";
import { onPgliteAndPostgres } from "./helpers/postgres-runners.js";

const CONVERSATIONS = 5_000;
const MINE = ["mine-1", "mine-2", "mine-3"];

test("SQLite: a version-12 database gains the owner column and index on open; an owner's reads are ranges of it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-registry-owner-"));
  const file = join(dir, "v12.db");
  const driver = openSqlite(file);
  migrate(
    driver,
    SQLITE_MIGRATIONS.filter((m) => m.version < 13),
  );
  driver.run(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO agent_sessions (id, name, created_at, updated_at, activity) SELECT 'chat' || i, '', '', '', i FROM n`,
    [CONVERSATIONS],
  );
  driver.close();
  const store = new SqliteStore(file);
  try {
    for (const id of MINE) await store.registry.create({ id, name: "", owner: "me" });
    await store.registry.create({ id: "theirs", name: "", owner: "them" });
    store.driver.run("ANALYZE");
    for (const [sql, params] of [
      ["WHERE owner = ? ORDER BY updated_at DESC, activity DESC LIMIT ? OFFSET ?", ["me", -1, 0]],
      ["WHERE owner = ?", ["me"]],
    ] as const) {
      const plan = store.driver
        .all<{ detail: string }>(`EXPLAIN QUERY PLAN SELECT * FROM agent_sessions ${sql}`, params)
        .map((row) => row.detail)
        .join(" | ");
      assert.match(plan, /USING INDEX agent_sessions_owner \(owner=\?/, plan);
      assert.doesNotMatch(plan, /TEMP B-TREE|SCAN agent_sessions/, plan);
    }
    assert.deepEqual(ids(await store.registry.list({ owner: "me" })), [...MINE].reverse());
    assert.equal(
      (await store.registry.list()).length,
      CONVERSATIONS + 4,
      "rows from before owners still list",
    );
    assert.equal((await store.registry.get("chat1"))?.owner, undefined);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Version-11 tables with many conversations, opened (migrated) by the current code; the plan of an owner's list. */
async function checkPostgres(db: Runner, source: Parameters<typeof openExecutor>[0], schema: string) {
  const options = { schema, tablePrefix: "own_" };
  const t: Tables = tableNames(options);
  await dropSchema(db, schema);
  try {
    assert.equal(await migratePostgres(await openExecutor(source), t, POSTGRES_MIGRATIONS.slice(0, 11)), 11);
    await db.query(
      `INSERT INTO ${t.sessions} (id, name, created_at, updated_at)
       SELECT 'chat' || i, '', now(), now() FROM generate_series(1, ${CONVERSATIONS}) i`,
    );
    const store = await PostgresStore.open(source, options);
    for (const id of MINE) await store.registry.create({ id, name: "", owner: "me" });
    await db.query(`ANALYZE ${t.sessions}`);
    await db.query("SET plan_cache_mode = force_generic_plan");
    try {
      await db.query(`PREPARE owner_list (bigint, bigint, text) AS ${listOwnerSql(t)}`);
      const explained = await db.query("EXPLAIN EXECUTE owner_list(NULL, 0, 'me')");
      await db.query("DEALLOCATE owner_list");
      const plan = explained.rows.map((r) => (r as { "QUERY PLAN": string })["QUERY PLAN"]).join("\n");
      assert.match(plan, /Index Scan using own_agent_sessions_owner/, plan);
      assert.doesNotMatch(plan, /Sort|Seq Scan/, plan);
    } finally {
      await db.query("RESET plan_cache_mode");
    }
    assert.deepEqual(ids(await store.registry.list({ owner: "me" })), [...MINE].reverse());
    await store.close();
  } finally {
    await dropSchema(db, schema);
  }
}

await onPgliteAndPostgres(
  "version-11 tables gain the owner column and index on open; an owner's list is a range of it",
  "agent_session_test_owner",
  checkPostgres,
);
