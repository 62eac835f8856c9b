// The CLI on Postgres: `--schema`/`--table-prefix` pick the tables, and a read-only command never creates any
// (an empty database, somebody else's schema) — it reports "no agent-session tables" like it does for SQLite.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import pg from "pg";
import { PostgresStore } from "../../src/postgres/index.js";
import { dropSchema, PG_URL, postgresUnavailable } from "../fixtures/postgres-db.js";
import { parseJson, runCli } from "./helpers.js";

const skip = (await postgresUnavailable()) ?? false;
const SCHEMA = `cli_tables_${process.pid}`;
const OTHER = `cli_foreign_${process.pid}`;
const PREFIX = `cli${process.pid}_`;
let client: pg.Client;

async function relations(schema: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    "SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY 1",
    [schema],
  );
  return rows.map((r) => r.name);
}

async function schemaExists(schema: string): Promise<boolean> {
  const { rows } = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
  return rows.length > 0;
}

before(async () => {
  if (skip) return;
  client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  for (const schema of [SCHEMA, OTHER]) await dropSchema(client, schema);
});

after(async () => {
  if (skip) return;
  for (const schema of [SCHEMA, OTHER]) await dropSchema(client, schema);
  await client.end();
});

test("reading a schema that does not exist creates nothing", { skip }, async () => {
  for (const command of [["ls"], ["stats"], ["search", "hello"], ["export"]]) {
    const result = await runCli([...command, "--db", PG_URL, "--schema", SCHEMA, "--json"]);
    assert.equal(result.code, 1, `${command[0]}: ${result.stderr}`);
    const { error } = JSON.parse(result.stderr) as { error: { code: string; message: string } };
    assert.equal(error.code, "NOT_FOUND", command[0]);
    assert.match(error.message, new RegExp(`no agent-session tables in schema "${SCHEMA}"`));
  }
  assert.equal(await schemaExists(SCHEMA), false);
});

test("reading somebody else's schema leaves it as it was", { skip }, async () => {
  await client.query(`CREATE SCHEMA "${OTHER}"`);
  await client.query(`CREATE TABLE "${OTHER}".orders (id int PRIMARY KEY)`);
  const result = await runCli(["ls", "--db", PG_URL, "--schema", OTHER]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /no agent-session tables/);
  assert.deepEqual(await relations(OTHER), ["orders"]);
});

test("reading the search_path under an unused prefix creates no table", { skip }, async () => {
  const result = await runCli(["ls", "--db", PG_URL, "--table-prefix", PREFIX]);
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    new RegExp(`no agent-session tables in the search_path with prefix "${PREFIX}"`),
  );
  const { rows } = await client.query("SELECT 1 FROM pg_class WHERE relname LIKE $1", [`${PREFIX}%`]);
  assert.equal(rows.length, 0);
});

test("--schema and --table-prefix open the store that has them", { skip }, async () => {
  const store = await PostgresStore.open(PG_URL, { schema: SCHEMA, tablePrefix: PREFIX });
  await store.registry.create({ id: "kept", name: "kept session" });
  await store
    .session("kept")
    .appendMessage({ id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] });
  await store.close();
  const listed = parseJson<unknown>(
    await runCli(["ls", "--json", "--db", PG_URL, "--schema", SCHEMA, "--table-prefix", PREFIX]),
  );
  assert.match(JSON.stringify(listed), /"kept"/);
  // Global options may come before the command too.
  const early = await runCli(["--schema", SCHEMA, "--table-prefix", PREFIX, "--db", PG_URL, "ls"]);
  assert.equal(early.code, 0, early.stderr);
  assert.match(early.stdout, /kept/);
  // The same schema without the prefix holds no agent-session tables.
  const bare = await runCli(["ls", "--db", PG_URL, "--schema", SCHEMA]);
  assert.equal(bare.code, 1);
  assert.match(bare.stderr, /no agent-session tables/);
});

test("bad table options fail in one line", { skip }, async () => {
  const sqlite = await runCli(["ls", "--db", "./x.db", "--schema", "app"]);
  assert.equal(sqlite.code, 2);
  assert.match(sqlite.stderr, /--schema applies to a postgres:\/\/ database only/);
  const invalid = await runCli(["ls", "--db", PG_URL, "--schema", "no-such;drop"]);
  assert.equal(invalid.code, 1);
  assert.match(invalid.stderr, /schema must be a plain SQL identifier/);
});
