// A connection that may not change the tables (a read-only transaction, a role with SELECT only) cannot migrate
// them: it is told so with READONLY and what to do, on PGlite and on the server when one is reachable.
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { PostgresStore } from "../src/postgres/index.js";
import { POSTGRES_SCHEMA_VERSION } from "../src/postgres/schema.js";
import { tableNames } from "../src/sql/engines/postgres/tables.js";
import { ids, msg } from "../src/testing/contract/harness.js";
import { CITUS_URL, citusSchema } from "./fixtures/citus-db.js";
import { newPGlite } from "./fixtures/pglite.js";
import {
  dropSchema,
  PG_URL,
  pgliteSwitchedOff,
  postgresUnavailable,
  testPool,
} from "./fixtures/postgres-db.js";

// The cluster's schema first, before any test is registered: a root-level `after` added once the earlier tests
// have finished would run at once and drop it under the cluster's tests.
const cluster = await citusSchema("readonly");

const older = POSTGRES_SCHEMA_VERSION - 1;

test("PGlite: a read-only transaction on older tables gets READONLY; a writable one migrates them", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  try {
    const options = { schema: "agent_session" };
    const store = await PostgresStore.open(db, options);
    await store.session("a").appendMessage(msg("m", "hello there"));
    await store.close();
    await db.query(`UPDATE ${tableNames(options).version} SET version = ${older}`);
    await db.query("SET default_transaction_read_only = on");
    await assert.rejects(PostgresStore.open(db, options), { code: "READONLY" });
    await db.query("SET default_transaction_read_only = off");
    const migrated = await PostgresStore.open(db, options);
    assert.deepEqual(ids(await migrated.searchMessages("hello")), ["m"]);
    await migrated.close();
  } finally {
    await db.close();
  }
});

/**
 * A role that may only read opens the store `options` (older tables, with `admin`) and an empty schema beside it,
 * on the server at `server` (a URL): READONLY both times. The role and the empty schema are dropped after.
 */
async function readOnlyRole(
  admin: pg.Pool,
  server: string,
  options: { schema: string; distributed?: boolean },
) {
  const { schema } = options;
  const empty = `${schema}_empty`;
  const role = `agent_session_reader_${process.pid}`;
  const url = new URL(server);
  url.username = role;
  const reader = new pg.Pool({ connectionString: url.toString(), max: 2 });
  try {
    const store = await PostgresStore.open(admin, options);
    await store.session("a").appendMessage(msg("m", "hello there"));
    await store.close();
    await admin.query(`UPDATE ${tableNames(options).version} SET version = ${older}`);
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    await admin.query(`CREATE SCHEMA ${empty}`);
    await admin.query(`GRANT USAGE ON SCHEMA ${schema}, ${empty} TO ${role}`);
    await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
    await assert.rejects(PostgresStore.open(reader, options), { code: "READONLY" });
    await assert.rejects(PostgresStore.open(reader, { ...options, schema: empty }), { code: "READONLY" });
  } finally {
    await reader.end();
    await dropSchema(admin, empty);
    const created = await admin.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [role]);
    if (created.rowCount) {
      await admin.query(`DROP OWNED BY ${role}`);
      await admin.query(`DROP ROLE ${role}`);
    }
  }
}

const unavailable = await postgresUnavailable();
if (unavailable) console.log(`Skipping the Postgres read-only role test: ${unavailable}`);
test("Postgres: a role that may only read gets READONLY on older tables and where there are none", {
  skip: unavailable ?? false,
}, async () => {
  const admin = testPool();
  const schema = `agent_session_test_readonly_${process.pid}`;
  try {
    await dropSchema(admin, schema);
    await readOnlyRole(admin, PG_URL, { schema });
  } finally {
    await dropSchema(admin, schema);
    await admin.end();
  }
});

if (cluster) {
  test("citus: a role that may only read gets READONLY on older tables and where there are none", () =>
    readOnlyRole(cluster.pool, CITUS_URL, { schema: cluster.schema, distributed: true }));
}
