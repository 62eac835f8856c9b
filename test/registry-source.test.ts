// scan({ source }) reads a range of the index agent_sessions_source (source, id) on SQLite and Postgres, so the few
// agent sessions of a store full of conversations are found without reading the conversations' rows; stores made
// before the index gain it on open. Proven by query plans (generic ones on Postgres, as prepared statements get),
// not by time.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { SessionInfo } from "../src/contract/registry.js";
import { PostgresStore } from "../src/postgres/index.js";
import {
  migrate as migratePostgres,
  POSTGRES_MIGRATIONS,
  POSTGRES_SCHEMA_VERSION,
} from "../src/postgres/schema.js";
import { openExecutor } from "../src/sql/engines/postgres/client.js";
import { type Tables, tableNames } from "../src/sql/engines/postgres/tables.js";
import { openSqlite } from "../src/sql/engines/sqlite/open.js";
import { scanSourceAfterSql, scanSourceFirstSql } from "../src/sql/registry/postgres.js";
import { migrate, SQLITE_MIGRATIONS } from "../src/sqlite/schema.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { ids } from "../src/testing/contract/harness.js";
import { dropSchema, type Runner } from "./fixtures/postgres-db.js";
import { onPgliteAndPostgres } from "./helpers/postgres-runners.js";

const CONVERSATIONS = 5_000;
const LATEST = Math.max(...SQLITE_MIGRATIONS.map((step) => step.version));
const AGENTS = ["agent-1", "agent-2", "agent-3"];

async function agentIds(scan: AsyncIterable<SessionInfo>): Promise<string[]> {
  const found: SessionInfo[] = [];
  for await (const info of scan) found.push(info);
  return ids(found);
}

test("SQLite: a version-10 database gains the index on open; both pages of scan({ source }) are ranges of it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-registry-source-"));
  const file = join(dir, "v10.db");
  const driver = openSqlite(file);
  migrate(
    driver,
    SQLITE_MIGRATIONS.filter((m) => m.version < 11),
  );
  driver.run(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO agent_sessions (id, name, created_at, updated_at, activity) SELECT 'chat' || i, '', '', '', i FROM n`,
    [CONVERSATIONS],
  );
  driver.close();
  const store = new SqliteStore(file);
  try {
    for (const id of AGENTS) await store.registry.create({ id, name: "", source: "agent" });
    assert.equal(
      store.driver.get<{ version: number }>("SELECT version FROM agent_session_schema")?.version,
      LATEST,
    );
    store.driver.run("ANALYZE");
    for (const [sql, params] of [
      ["WHERE source = ? ORDER BY id LIMIT ?", ["agent", 2]],
      ["WHERE source = ? AND id > ? ORDER BY id LIMIT ?", ["agent", "agent-1", 2]],
    ] as const) {
      const plan = store.driver
        .all<{ detail: string }>(`EXPLAIN QUERY PLAN SELECT * FROM agent_sessions ${sql}`, params)
        .map((row) => row.detail)
        .join(" | ");
      assert.match(plan, /USING INDEX agent_sessions_source \(source=\?/, plan);
      assert.doesNotMatch(plan, /TEMP B-TREE|SCAN agent_sessions/, plan);
    }
    assert.deepEqual(await agentIds(store.registry.scan({ source: "agent", pageSize: 2 })), AGENTS);
    // Idempotent: running the steps again changes nothing.
    assert.equal(migrate(store.driver), LATEST);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A version-9 schema with many conversations, opened (migrated) by the current code; the plans of both pages. */
async function checkPostgres(db: Runner, source: Parameters<typeof openExecutor>[0], schema: string) {
  const options = { schema, tablePrefix: "src_" };
  const t: Tables = tableNames(options);
  await dropSchema(db, schema);
  try {
    assert.equal(await migratePostgres(await openExecutor(source), t, POSTGRES_MIGRATIONS.slice(0, 9)), 9);
    await db.query(
      `INSERT INTO ${t.sessions} (id, name, created_at, updated_at)
       SELECT 'chat' || i, '', now(), now() FROM generate_series(1, ${CONVERSATIONS}) i`,
    );
    const store = await PostgresStore.open(source, options);
    for (const id of AGENTS) await store.registry.create({ id, name: "", source: "agent" });
    await db.query(`ANALYZE ${t.sessions}`);
    const { rows } = await db.query(`SELECT version FROM ${t.version}`);
    assert.deepEqual(rows, [{ version: POSTGRES_SCHEMA_VERSION }]);
    await db.query("SET plan_cache_mode = force_generic_plan");
    try {
      for (const [name, sql, types, args] of [
        ["scan_first", scanSourceFirstSql(t), "bigint, text", "2, 'agent'"],
        ["scan_after", scanSourceAfterSql(t), "bigint, text, text", "2, 'agent-1', 'agent'"],
      ] as const) {
        await db.query(`PREPARE ${name} (${types}) AS ${sql}`);
        const explained = await db.query(`EXPLAIN EXECUTE ${name}(${args})`);
        await db.query(`DEALLOCATE ${name}`);
        const plan = explained.rows.map((r) => (r as { "QUERY PLAN": string })["QUERY PLAN"]).join("\n");
        assert.match(plan, /Index Scan using src_agent_sessions_source/, plan);
        if (name === "scan_after") assert.match(plan, /Index Cond: .*id > /, plan);
        assert.doesNotMatch(plan, /Sort|Seq Scan|Filter/, plan);
      }
    } finally {
      await db.query("RESET plan_cache_mode");
    }
    assert.deepEqual(await agentIds(store.registry.scan({ source: "agent", pageSize: 2 })), AGENTS);
    await store.close();
  } finally {
    await dropSchema(db, schema);
  }
}

await onPgliteAndPostgres(
  "version-9 tables gain the index on open; both pages of scan({ source }) are ranges of it",
  "agent_session_test_source",
  checkPostgres,
);
