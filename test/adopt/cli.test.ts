// `agent-session adopt` on a SQLite file and a Postgres database the real reference package wrote.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import pg from "pg";
import { loadBetterSqlite3 } from "../../src/sql/engines/sqlite/better-sqlite3.js";
import { parseJson, runCli, tempDir } from "../cli/helpers.js";
import { dropSchema, PG_URL, postgresUnavailable } from "../fixtures/postgres-db.js";
import {
  REFERENCE_POSTGRES_DDL,
  writeReferencePostgres,
  writeReferenceSqlite,
} from "../fixtures/reference-data.js";
import { sqlTagAgent } from "../helpers/sql-tag.js";

const tmp = tempDir("agent-session-adopt-cli-");
after(() => tmp.remove());

test("adopt reports what it adopted, lists what it left, and drops the source only when clean", async () => {
  const path = tmp.path("reference.db");
  const agent = sqlTagAgent(path);
  const snap = await writeReferenceSqlite(agent);
  agent.db.close();

  const first = await runCli(["adopt", "--db", path]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /3 session\(s\), 10 message\(s\), 1 overlay\(s\), 2 registry row\(s\)/);
  assert.match(
    first.stdout,
    /left in place: assistant_messages .*\/compaction_bogus: the id starts with the reserved/,
  );
  assert.match(first.stdout, /left untouched/);
  // Adopted data is what the other commands see.
  const ls = parseJson<{ name: string }[]>(await runCli(["ls", "--db", path, "--json"]));
  assert.deepEqual(
    ls
      .map((s) => s.name)
      .filter(Boolean)
      .sort(),
    ["first chat", "forked chat"],
  );
  const again = parseJson<{ report: { messages: { inserted: number; skipped: number }; verified: number } }>(
    await runCli(["adopt", "--db", path, "--json"]),
  );
  assert.deepEqual(again.report.messages, { inserted: 0, skipped: 10 });
  // One row could not be adopted: --drop refuses and leaves everything in place.
  const refused = await runCli(["adopt", "--db", path, "--drop"]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /not dropped/);
  const Database = loadBetterSqlite3();
  const db = new Database(path);
  assert.equal((db.prepare("SELECT COUNT(*) AS n FROM assistant_messages").get() as { n: number }).n, 11);
  db.close();
  assert.ok(snap.chatId);

  const missing = await runCli(["adopt", "--db", tmp.path("nothing.db")]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no database/);
});

// The same command on a Postgres database the reference's own Postgres providers wrote (its documented tables on
// the connection's search_path), as its docs wire them (a pg Client).
const unavailable = await postgresUnavailable();
const SCHEMA = `agent_session_test_adopt_cli_${process.pid}`;

test("adopt on Postgres: adopts the reference's tables once, then re-verifies; --drop only when clean", {
  skip: unavailable ?? false,
}, async () => {
  const url = new URL(PG_URL);
  url.searchParams.set("options", `-c search_path=${SCHEMA}`);
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const client = new pg.Client({ connectionString: url.href });
  try {
    await dropSchema(admin, SCHEMA);
    await admin.query(`CREATE SCHEMA ${SCHEMA}`);
    await client.connect();
    await client.query(REFERENCE_POSTGRES_DDL);
    const snap = await writeReferencePostgres(client);
    const db = ["--db", url.href, "--schema", SCHEMA];

    const first = await runCli(["adopt", ...db]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /2 session\(s\), 7 message\(s\), 1 overlay\(s\).*1 block\(s\), 2 entr/);
    assert.match(
      first.stdout,
      /left in place: assistant_messages other\/compaction_bogus: the id starts with/,
    );
    assert.match(first.stdout, /left untouched/);
    // Adopted data is what the other commands see.
    const show = parseJson<{ entries: { id: string }[] }>(await runCli(["show", "chat", ...db, "--json"]));
    assert.deepEqual(
      show.entries.map((m) => m.id),
      snap.histories.get("chat"),
    );
    const again = parseJson<{ report: { messages: object; verified: number; differingCount: number } }>(
      await runCli(["adopt", ...db, "--json"]),
    );
    assert.deepEqual(again.report.messages, { inserted: 0, skipped: 7 });
    assert.equal(again.report.verified, 7 + 1 + 1 + 2);
    assert.equal(again.report.differingCount, 0);
    const refused = await runCli(["adopt", ...db, "--drop"]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /not dropped/);
    const count = await client.query("SELECT COUNT(*)::int AS n FROM assistant_messages");
    assert.equal(count.rows[0].n, 8);
    // Once the row that cannot be stored is gone, the adoption is clean and --drop drops the source tables.
    await client.query("DELETE FROM assistant_messages WHERE id IN ('compaction_bogus', 'o2')");
    const dropped = await runCli(["adopt", ...db, "--drop"]);
    assert.equal(dropped.code, 0, dropped.stderr);
    assert.match(dropped.stdout, /were dropped/);
    const left = await client.query("SELECT to_regclass('assistant_messages') AS t");
    assert.equal(left.rows[0].t, null);
  } finally {
    await client.end().catch(() => undefined);
    await dropSchema(admin, SCHEMA);
    await admin.end();
  }
});
