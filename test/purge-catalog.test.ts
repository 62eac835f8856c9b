// What a purge reaches of the engine's own files (src/sql/purge/postgres-catalog.ts, docs/PRIVACY.md): a PGlite data
// directory holds no byte of an erased owner in any file (WAL segments, recycled ones too, and the catalog) after a
// complete purge, a reopen and 200 more writes; a role that may not rewrite pg_statistic gets an incomplete report
// that says why, on a server and on every node of a cluster.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { hasFactStore } from "../src/contract/facts.js";
import { SessionManager } from "../src/manager/manager.js";
import { PostgresStore, type PostgresStoreOptions } from "../src/postgres/index.js";
import { STATISTIC } from "../src/sql/purge/postgres-catalog.js";
import type { PurgeReport } from "../src/store/purge.js";
import { msg } from "../src/testing/contract/harness.js";
import { CITUS_URL, citusSchema } from "./fixtures/citus-db.js";
import { ownDatabase } from "./fixtures/own-database.js";
import { newPGlite } from "./fixtures/pglite.js";
import {
  dropSchema,
  PG_URL,
  pgliteSwitchedOff,
  postgresUnavailable,
  testPool,
} from "./fixtures/postgres-db.js";
import { occurrences } from "./helpers/encryption.js";
import { filesUnder, MARKER, purgeUntilComplete } from "./helpers/purge.js";
import { analyzeSchema, statisticsPagesHolding } from "./helpers/purge-reach.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-purge-catalog-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The files of `dataDir` holding the marker, by path under it. */
const holding = (dataDir: string) =>
  filesUnder(dataDir)
    .filter((path) => occurrences([path], MARKER) > 0)
    .map((path) => path.slice(dataDir.length + 1));

/** Over a WAL segment (16 MB) of rows written and deleted, then a checkpoint, which recycles the segments before. */
async function churn(db: PGlite): Promise<void> {
  await db.exec("CREATE TABLE IF NOT EXISTS public.churn (v text)");
  await db.exec("INSERT INTO public.churn SELECT repeat('x', 1000) FROM generate_series(1, 20000)");
  await db.exec("DELETE FROM public.churn");
  await db.exec("CHECKPOINT");
}

test("PGlite data directory: an erased owner's words are in no file after the purge, a reopen and 200 writes", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const dataDir = join(dir, "pglite");
  let db = await newPGlite({ dataDir });
  let store = await PostgresStore.open(db, { schema: "files" });
  const manager = SessionManager.create(store);
  const kept = await manager.create("kept notes", { owner: "keeper" });
  await manager.append(kept.id, msg("k0", "kept words"));
  const { id } = await manager.create(`${MARKER} chat`, { owner: MARKER });
  for (let i = 0; i < 20; i++) await manager.append(id, msg(`m${i}`, `${MARKER} says ${i}`));
  if (!hasFactStore(store)) throw new Error("a Postgres store keeps facts");
  const sources = [{ sessionId: id, messageId: "m0" }];
  const fact = { text: `fact ${MARKER}`, about: MARKER, observedAt: 1, producer: "function:test", sources };
  await store.facts.add({ owner: MARKER }, [fact]);
  await analyzeSchema(db, "files");
  // The segments written so far, the marker's among them, recycled: renamed for reuse, their bytes kept (once: a
  // second churn would write through the recycled segments, over the marker).
  await churn(db);
  const { rows } = await db.query<{ name: string }>(
    "SELECT pg_walfile_name(pg_current_wal_insert_lsn()) AS name",
  );
  const later = holding(dataDir).filter(
    (path) => /^pg_wal\/[0-9A-F]{24}$/.test(path) && path > `pg_wal/${rows[0]!.name}`,
  );
  assert.ok(later.length > 0, `a recycled segment past the one in use holds the marker: ${holding(dataDir)}`);
  await manager.eraseOwner(MARKER);
  const report = await store.purge();
  assert.equal(report.complete, true, JSON.stringify(report));
  await db.query("CHECKPOINT");
  assert.deepEqual(holding(dataDir), [], "no file of the data directory holds the marker after the purge");
  await store.close();
  await db.close();
  db = await newPGlite({ dataDir });
  store = await PostgresStore.open(db, { schema: "files" });
  for (let i = 0; i < 200; i++) await store.session(kept.id).appendMessage(msg(`n${i}`, `later words ${i}`));
  assert.equal((await store.session(kept.id).getHistory()).length, 201);
  await store.close();
  await db.close();
  assert.deepEqual(holding(dataDir), [], "nor after a reopen and 200 more writes");
  assert.ok(occurrences(filesUnder(dataDir), "kept words") > 0, "the scan reads what it should");
});

/**
 * A purge by a role that owns its schema but is neither a superuser nor the database's owner: every step completes
 * but the rewrite of pg_statistic (on every node of a cluster), which says why, so the report is incomplete.
 */
async function refusedAsPlainRole(url: string, admin: pg.Pool, options: PostgresStoreOptions): Promise<void> {
  const role = `agent_session_purge_plain_${process.pid}`;
  const schema = options.schema!;
  await dropSchema(admin, schema);
  await admin.query(`DROP ROLE IF EXISTS ${role}`);
  await admin.query(`CREATE ROLE ${role} LOGIN`);
  const client = new pg.Client({ connectionString: url });
  try {
    await admin.query(`CREATE SCHEMA ${schema} AUTHORIZATION ${role}`);
    await client.connect();
    await client.query(`SET ROLE ${role}`);
    const store = await PostgresStore.open(client, options);
    const manager = SessionManager.create(store);
    const { id } = await manager.create("notes", { owner: "alice" });
    await manager.append(id, msg("m0", `${MARKER} words`));
    await manager.eraseOwner("alice");
    const report: PurgeReport = await store.purge();
    await store.close();
    assert.equal(report.complete, false, JSON.stringify(report));
    // The horizon's steps may be incomplete when another test file's transaction is older than the purge.
    const horizon = new Set(["open snapshots", "dead rows"]);
    const undone = report.steps.filter((s) => s.incomplete !== undefined && !horizon.has(s.action));
    assert.ok(undone.length > 0, JSON.stringify(report));
    for (const step of undone) {
      assert.equal(step.target, STATISTIC, JSON.stringify(step));
      assert.match(step.incomplete!, /not a superuser nor the database's owner/);
    }
    const nodes = options.distributed ? ["VACUUM FULL", "VACUUM FULL on workers"] : ["VACUUM FULL"];
    assert.deepEqual(
      undone.map((s) => s.action),
      nodes,
    );
  } finally {
    await client.end();
    await dropSchema(admin, schema);
    await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
  }
}

const unavailable = await postgresUnavailable();
const cluster = await citusSchema("purge_catalog");
test("Postgres: a role that may not rewrite pg_statistic gets an incomplete purge that says why", {
  skip: unavailable ?? false,
}, async () => {
  // A database of its own: other test files' transactions do not hold the purge's horizon back.
  const own = await ownDatabase("purge_catalog");
  const admin = testPool(2, own.url);
  try {
    await refusedAsPlainRole(own.url, admin, { schema: `agent_session_purge_plain_${process.pid}` });
  } finally {
    await admin.end();
    await own.drop();
  }
});

// VACUUM's horizon ignores other databases, but VACUUM FULL's own snapshot counts every running transaction id of the
// server: a transaction of another database holding an id from before the deletes made the rewrite of pg_statistic
// keep the statistics ANALYZE replaced, which no step counted, so the purge said complete with them on disk.
test("Postgres: a transaction id of another database from before the purge holds it back: the report names it", {
  skip: unavailable ?? false,
}, async () => {
  const own = await ownDatabase("purge_other_db");
  const pool = testPool(2, own.url);
  // The shared database: another database of the same server.
  const elsewhere = new pg.Client({ connectionString: PG_URL });
  const schema = `agent_session_purge_other_db_${process.pid}`;
  try {
    await elsewhere.connect();
    const store = await PostgresStore.open(pool, { schema });
    const manager = SessionManager.create(store);
    const { id } = await manager.create("notes", { owner: "alice" });
    for (let i = 0; i < 40; i++) await manager.append(id, msg(`m${i}`, `${MARKER} words ${i % 3}`));
    await analyzeSchema(pool, schema);
    await elsewhere.query("BEGIN");
    const [held] = (await elsewhere.query<{ pid: number }>("SELECT txid_current(), pg_backend_pid() AS pid"))
      .rows;
    await manager.eraseOwner("alice");
    await analyzeSchema(pool, schema);
    const report: PurgeReport = await store.purge({ lockTimeoutMs: 200 });
    assert.equal(report.complete, false, JSON.stringify(report));
    const wait = report.steps.find((step) => step.action === "open snapshots");
    assert.match(wait?.incomplete ?? "", new RegExp(`pid ${held!.pid}\\b`), JSON.stringify(report));
    await elsewhere.query("COMMIT");
    assert.equal((await purgeUntilComplete(() => store.purge())).complete, true);
    assert.equal(
      await statisticsPagesHolding(pool, MARKER),
      0,
      "pg_statistic's pages hold no erased statistic",
    );
    await store.close();
  } finally {
    await elsewhere.end();
    await pool.end();
    await own.drop();
  }
});

test("Citus: a role that may not rewrite pg_statistic gets an incomplete purge naming every node", {
  skip: cluster ? false : "no Citus cluster",
}, async () => {
  await refusedAsPlainRole(CITUS_URL, cluster!.pool, {
    schema: `agent_session_purge_plain_${process.pid}`,
    distributed: true,
  });
});
