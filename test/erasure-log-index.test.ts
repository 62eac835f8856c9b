// An erasure deletes a session's change-log rows through the log's index by session, not by reading the whole log
// (the log is written on every append, so it is the largest table an erasure touches); a log made before the index
// gets it from the migration.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { PostgresStore } from "../src/postgres/index.js";
import { logNames } from "../src/sql/change-log/postgres-append-log.js";
import { tableNames } from "../src/sql/engines/postgres/tables.js";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { eraseChangesSql } from "../src/sql/erase/postgres.js";
import { ERASE_CHANGES } from "../src/sql/erase/sqlite.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { msg } from "../src/testing/contract/harness.js";
import { dropSchema, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";

const Database = loadBetterSqlite3();

describe("SQLite change log by session", () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-log-index-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("an erasure's delete of the log rows is a search of the session index", async () => {
    const store = new SqliteStore(join(dir, "plan.db"), { changeLog: true });
    try {
      for (let i = 0; i < 20; i++) await store.session(`s${i}`).appendMessage(msg(`m${i}`));
      const plan = store.driver.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${ERASE_CHANGES}`, ["s3"]);
      const details = plan.map((row) => row.detail).join("; ");
      assert.match(
        details,
        /SEARCH agent_changes USING (COVERING )?INDEX agent_changes_session \(session_id=\?\)/,
      );
      assert.doesNotMatch(details, /SCAN agent_changes/);
    } finally {
      await store.close();
    }
  });

  test("migration 16 indexes a log made before the index; a store without a log gets none", async () => {
    const path = join(dir, "old.db");
    const store = new SqliteStore(path, { changeLog: true });
    await store.session("a").appendMessage(msg("m1"));
    await store.close();
    const raw = new Database(path);
    raw.exec("DROP INDEX agent_changes_session; UPDATE agent_session_schema SET version = 15");
    raw.close();
    const index = "SELECT name FROM sqlite_master WHERE name = 'agent_changes_session'";
    const reopened = new SqliteStore(path);
    try {
      assert.equal(reopened.driver.all(index).length, 1);
    } finally {
      await reopened.close();
    }
    const plain = new SqliteStore(join(dir, "plain.db"));
    try {
      await plain.session("a").appendMessage(msg("m1"));
      assert.equal(plain.driver.all(index).length, 0);
      assert.equal(plain.driver.all("SELECT name FROM sqlite_master WHERE name = 'agent_changes'").length, 0);
    } finally {
      await plain.close();
    }
  });
});

const unavailable = await postgresUnavailable();
if (unavailable) console.info(`# skipping Postgres change-log index tests: ${unavailable}`);

describe("Postgres change log by session", { skip: unavailable ?? false }, () => {
  const pool = unavailable ? undefined : testPool(2);
  after(() => pool?.end());

  test("an erasure's delete of the log rows uses the session index, among 20,000 rows", async () => {
    const db = pool!;
    const schema = `agent_session_log_index_${process.pid}`;
    await dropSchema(db, schema);
    const store = await PostgresStore.open(db, { schema, changeLog: true });
    try {
      await store.session("s1").appendMessage(msg("m1"));
      const t = tableNames({ schema });
      await db.query(`INSERT INTO "${schema}".agent_changes (origin, session_id, kind, ids)
        SELECT 'o', 's' || (i % 500), 'append', '[]' FROM generate_series(1, 20000) AS i`);
      await db.query(`ANALYZE "${schema}".agent_changes`);
      const { rows } = await db.query(`EXPLAIN (FORMAT JSON) ${eraseChangesSql(logNames(t).table)}`, ["s7"]);
      const plan = JSON.stringify(rows[0]);
      assert.match(plan, /"Index Name":"agent_changes_session"/, plan);
      assert.doesNotMatch(plan, /"Node Type":"Seq Scan"/, plan);
    } finally {
      await store.close();
      await dropSchema(db, schema);
    }
  });

  test("migration 15 indexes a log made before the index", async () => {
    const db = pool!;
    const schema = `agent_session_log_migrate_${process.pid}`;
    await dropSchema(db, schema);
    const store = await PostgresStore.open(db, { schema, changeLog: true });
    await store.session("a").appendMessage(msg("m1"));
    await store.close();
    try {
      await db.query(`DROP INDEX "${schema}".agent_changes_session`);
      await db.query(`UPDATE "${schema}".agent_session_schema SET version = 14`);
      const reopened = await PostgresStore.open(db, { schema });
      await reopened.close();
      const { rows } = await db.query("SELECT to_regclass($1) IS NOT NULL AS present", [
        `"${schema}".agent_changes_session`,
      ]);
      assert.deepEqual(rows, [{ present: true }]);
    } finally {
      await dropSchema(db, schema);
    }
  });
});
