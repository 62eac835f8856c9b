import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import pg from "pg";
import { PostgresSearchProvider, PostgresStore } from "../../src/postgres/index.js";
import { tableNames } from "../../src/sql/engines/postgres/tables.js";
import { bytesOf } from "../../src/testing/contract/media-harness.js";
import { parseJson, runCli } from "../cli/helpers.js";
import { dropSchema, PG_URL, postgresUnavailable } from "../fixtures/postgres-db.js";
import {
  imageMessage,
  REFERENCE_POSTGRES_DDL,
  type ReferencePostgresSnapshot,
  ref,
  text,
  writeReferencePostgres,
} from "../fixtures/reference-data.js";
import { warningsOf } from "../helpers/warnings.js";

const ids = (messages: { id: string }[]) => messages.map((m) => m.id);
const unavailable = await postgresUnavailable();
const SCHEMA = `agent_session_test_adopt_${process.pid}`;

/** A pool whose search_path is the test schema, where the reference's unqualified tables live. */
const poolOn = (schema: string, max = 4) =>
  new pg.Pool({
    connectionString: PG_URL,
    max,
    options: `-c search_path=${schema} -c synchronous_commit=off`,
  });

async function assertAdopted(store: PostgresStore, snap: ReferencePostgresSnapshot): Promise<void> {
  assert.deepEqual(ids(await store.session("chat").getHistory()), snap.histories.get("chat"));
  assert.deepEqual(
    (await store.session("chat").getHistory()).filter((m) => !m.id.startsWith("compaction_")),
    snap.chat.filter((m) => !m.id.startsWith("compaction_")),
  );
  // The reserved id stays behind; its child hangs under its parent.
  assert.deepEqual(ids(await store.session("other").getHistory()), ["o1", "o2"]);
  assert.deepEqual(ids(await store.session("chat").getBranches("u1")), snap.branchesOfFirst);
  assert.equal((await store.session("chat").getCompactions()).length, snap.compactions);
  assert.equal((await store.session("chat").getLatestLeaf())?.id, "a2");
  for (const [key, content] of snap.blocks) assert.equal(await store.blocks.getBlock(key), content);
  const notes = new PostgresSearchProvider(store, "notes");
  assert.equal(await notes.search("deploy"), snap.notesSearch);
  assert.deepEqual(ids(await store.session("chat").searchMessages("Friday")), ["u1"]);
}

async function sourceCounts(pool: pg.Pool): Promise<number[]> {
  const counts = [];
  for (const table of [
    "assistant_messages",
    "assistant_compactions",
    "cf_agents_context_blocks",
    "cf_agents_search_entries",
  ]) {
    counts.push(Number((await pool.query(`SELECT COUNT(*) AS n FROM ${table}`)).rows[0].n));
  }
  return counts;
}

if (unavailable) {
  test("adoption on postgres", { skip: unavailable }, () => undefined);
} else {
  describe("adoption of the reference's Postgres tables", () => {
    const pools: pg.Pool[] = [];
    after(async () => {
      const admin = poolOn("public", 1);
      await dropSchema(admin, SCHEMA);
      await dropSchema(admin, `${SCHEMA}_b`);
      await dropSchema(admin, `${SCHEMA}_c`);
      await dropSchema(admin, `${SCHEMA}_d`);
      await dropSchema(admin, `${SCHEMA}_e`);
      await admin.query(`DROP ROLE IF EXISTS ${SCHEMA}_role`);
      await admin.end();
      await Promise.all(pools.map((p) => p.end()));
    });

    /** A new schema holding the reference's empty tables, and a pool on it (closed after the tests). */
    async function referenceSchema(schema: string): Promise<pg.Pool> {
      const admin = poolOn("public", 1);
      await dropSchema(admin, schema);
      await admin.query(`CREATE SCHEMA ${schema}`);
      await admin.end();
      const pool = poolOn(schema);
      pools.push(pool);
      await pool.query(REFERENCE_POSTGRES_DDL);
      return pool;
    }

    async function referenceDatabase(
      schema: string,
    ): Promise<{ pool: pg.Pool; snap: ReferencePostgresSnapshot }> {
      const pool = await referenceSchema(schema);
      const client = await pool.connect();
      try {
        return { pool, snap: await writeReferencePostgres(client) };
      } finally {
        client.release();
      }
    }

    test("tables the reference's providers wrote are adopted on first use, verified, once", async () => {
      const { pool, snap } = await referenceDatabase(SCHEMA);
      const before = await sourceCounts(pool);
      const store = await PostgresStore.open(pool, { schema: SCHEMA });
      const report = store.adopted;
      assert.ok(report);
      assert.equal(report.sessions, 2);
      assert.deepEqual(report.messages, { inserted: 7, skipped: 0 });
      assert.deepEqual(report.compactions, { inserted: 1, skipped: 0 });
      assert.deepEqual(report.blocks, { inserted: 1, skipped: 0 });
      assert.deepEqual(report.entries, { inserted: 2, skipped: 0 });
      assert.equal(report.verified, 7 + 1 + 1 + 2);
      assert.equal(report.rejectedCount, 1);
      assert.equal(report.rejected[0]?.id, "compaction_bogus");
      await assertAdopted(store, snap);
      // Times travel (Postgres keeps microseconds; ours are milliseconds).
      const { rows } = await pool.query("SELECT created_at FROM assistant_messages WHERE id = 'u1'");
      const exported = [];
      for await (const item of store.transfer.exportSession("chat")) exported.push(item);
      const u1 = exported.find((i) => i.kind === "message" && i.message.id === "u1");
      assert.equal(
        u1?.kind === "message" && u1.message.createdAt,
        (rows[0].created_at as Date).toISOString(),
      );
      await store.close();

      const again = await PostgresStore.open(pool, { schema: SCHEMA });
      assert.equal(again.adopted, null);
      const rerun = await again.adoptReference();
      assert.deepEqual(rerun?.messages, { inserted: 0, skipped: 7 });
      assert.equal(rerun?.differingCount, 0);
      assert.deepEqual(await sourceCounts(pool), before);
      await assert.rejects(again.adoptReference({ dropSource: true }), { code: "CONFLICT" });
      await pool.query("DELETE FROM assistant_messages WHERE id IN ('compaction_bogus', 'o2')");
      const dropped = await again.adoptReference({ dropSource: true });
      assert.equal(dropped?.dropped, true);
      const left = await pool.query("SELECT to_regclass('assistant_messages') AS t");
      assert.equal(left.rows[0].t, null);
      await again.close();
    });

    test("inline media in the reference's rows is offloaded once, restored exactly and verified", async () => {
      const schema = `${SCHEMA}_d`;
      const pool = await referenceSchema(schema);
      const url = `data:image/png;base64,${bytesOf(300_000, 32).toString("base64")}`;
      const image = (id: string) => imageMessage(id, url);
      const client = await pool.connect();
      try {
        const reference = ref.Session.create(new ref.PostgresSessionProvider(client as never, "media"));
        await reference.appendMessage(image("i1"));
        await reference.appendMessage(text("t1", "nice"));
        await reference.appendMessage(image("i2"));
      } finally {
        client.release();
      }
      const store = await PostgresStore.open(pool, { schema });
      const report = store.adopted;
      assert.deepEqual(report?.messages, { inserted: 3, skipped: 0 });
      assert.equal(report?.differingCount, 0);
      assert.equal(report?.verified, 3);
      assert.deepEqual(await store.attachments.stats(), { count: 1, bytes: 300_000 });
      const s = store.session("media");
      assert.deepEqual(
        (await s.getHistory()).map((m) => JSON.stringify(m)),
        [image("i1"), text("t1", "nice"), image("i2")].map((m) => JSON.stringify(m)),
      );
      const rows = await s.getHistoryRowStats();
      assert.ok(Math.max(...rows.map((r) => r.bytes)) < 1000, "the rows hold pointers");
      // Adopting again skips and verifies; so does a row an earlier version adopted with its media inline.
      const t = tableNames({ schema });
      await pool.query(
        `UPDATE ${t.messages} SET content = (SELECT content FROM assistant_messages WHERE id = 'i1') WHERE id = 'i1'`,
      );
      const again = await store.adoptReference();
      assert.deepEqual(again?.messages, { inserted: 0, skipped: 3 });
      assert.equal(again?.differingCount, 0);
      assert.equal(again?.verified, 3);
      await s.clearMessages();
      assert.deepEqual(await store.attachments.stats(), { count: 0, bytes: 0 });
      await store.close();
    });

    test("a role that may not read the reference's tables gets a working store and a warning", async () => {
      const schema = `${SCHEMA}_c`;
      const role = `${SCHEMA}_role`;
      const { pool } = await referenceDatabase(schema);
      await pool.query(`DROP ROLE IF EXISTS ${role}`);
      await pool.query(`CREATE ROLE ${role} LOGIN`);
      await pool.query(`ALTER SCHEMA ${schema} OWNER TO ${role}`);
      const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
      await client.connect();
      try {
        await client.query(`SET ROLE ${role}`);
        let opened: PostgresStore | undefined;
        const warned = await warningsOf("AgentSessionAdoptWarning", async () => {
          opened = await PostgresStore.open(client, { schema });
        });
        const store = opened as PostgresStore;
        assert.equal(store.adopted, null);
        assert.equal(warned.length, 1);
        assert.match(
          warned[0]?.message ?? "",
          /were found but this role may not read them; nothing was adopted/,
        );
        await store.session("s").appendMessage({ id: "m", role: "user", parts: [] });
        assert.equal((await store.session("s").getHistory()).length, 1);
      } finally {
        await client.end();
      }
    });

    test("agent-session adopt on a schema without the reference's tables creates nothing there", async () => {
      const schema = `${SCHEMA}_e`;
      const admin = poolOn("public", 1);
      pools.push(admin);
      await dropSchema(admin, schema);
      await admin.query(`CREATE SCHEMA ${schema}`);
      const relations = async () =>
        Number(
          (
            await admin.query(
              "SELECT COUNT(*) AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = $1",
              [schema],
            )
          ).rows[0].n,
        );
      const url = new URL(PG_URL);
      url.searchParams.set("options", `-c search_path=${schema}`);
      const db = ["--db", url.href, "--schema", schema];
      const plain = await runCli(["adopt", ...db]);
      assert.equal(plain.code, 0, plain.stderr);
      assert.match(plain.stdout, /No reference tables \(assistant_messages.*\) in .*; nothing was written\./);
      assert.equal(parseJson<{ report: unknown }>(await runCli(["adopt", ...db, "--json"])).report, null);
      assert.equal(await relations(), 0, "no table, index or sequence was created");
      // With the reference's tables there (empty here), it adopts as before: our tables are created.
      const pool = poolOn(schema);
      pools.push(pool);
      await pool.query(REFERENCE_POSTGRES_DDL);
      const adopted = parseJson<{ report: { sessions: number } | null }>(
        await runCli(["adopt", ...db, "--json"]),
      );
      assert.equal(adopted.report?.sessions, 0);
      const t = tableNames({ schema });
      assert.equal(Number((await pool.query(`SELECT COUNT(*) AS n FROM ${t.adoptions}`)).rows[0].n), 1);
    });

    test("two stores starting at once adopt every row exactly once", async () => {
      const schema = `${SCHEMA}_b`;
      const { snap } = await referenceDatabase(schema);
      const [a, b] = [poolOn(schema), poolOn(schema)];
      pools.push(a, b);
      const stores = await Promise.all([
        PostgresStore.open(a, { schema }),
        PostgresStore.open(b, { schema }),
      ]);
      const inserted = stores.reduce((sum, s) => sum + (s.adopted?.messages.inserted ?? 0), 0);
      assert.equal(inserted, 7);
      const t = tableNames({ schema });
      assert.equal(Number((await a.query(`SELECT COUNT(*) AS n FROM ${t.messages}`)).rows[0].n), 7);
      assert.equal(Number((await a.query(`SELECT COUNT(*) AS n FROM ${t.adoptions}`)).rows[0].n), 1);
      await assertAdopted(stores[0]!, snap);
    });
  });
}
