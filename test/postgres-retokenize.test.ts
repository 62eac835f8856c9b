// A store indexed before CJK pairs (schema step 9) is indexed again when opened: on PGlite, and on the server when
// one is reachable.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PostgresStore } from "../src/postgres/index.js";
import type { Query } from "../src/sql/engines/postgres/client.js";
import { sessionLexeme } from "../src/sql/engines/postgres/fts.js";
import { tableNames } from "../src/sql/engines/postgres/tables.js";
import { retokenizeCjk } from "../src/sql/search/postgres-retokenize.js";
import { ids, msg } from "../src/testing/contract/harness.js";
import { citusSchema } from "./fixtures/citus-db.js";
import { newPGlite } from "./fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";

// The cluster's schema first, before any test is registered: a root-level `after` added once the earlier tests
// have finished would run at once and drop it under the cluster's tests.
const cluster = await citusSchema("retokenize");

interface Raw {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

async function check(
  db: ConstructorParameters<typeof PostgresStore>[0],
  raw: Raw,
  schema: string,
  distributed = false,
) {
  const options = { schema, distributed };
  const t = tableNames(options);
  const store = await PostgresStore.open(db, options);
  await store.session("a").appendMessage(msg("zh", "我喜欢吃苹果，昨天买了三个。"));
  await store.session("a").appendMessage(msg("en", "an apple a day", "assistant"));
  await store.entries.setEntry("kb", "水果", "我最喜欢的水果是香蕉");
  await store.close();
  // What an older release wrote: a lexeme per run, and schema version 8.
  await raw.query(`UPDATE ${t.messages} SET search = $1::tsvector WHERE id = 'zh'`, [
    `'${sessionLexeme("a")}' '我喜欢吃苹果':1 '昨天买了三个':2`,
  ]);
  await raw.query(`UPDATE ${t.entries} SET search = $1::tsvector`, [`'水果':1 '我最喜欢的水果是香蕉':2`]);
  // On one server the tables are made older (schema version 8), and the next open runs step 9. A distributed store
  // never runs a step that old (its tables were current when they were distributed), so on the cluster the step's
  // function runs directly instead.
  if (!distributed) await raw.query(`UPDATE ${t.version} SET version = 8`);
  const matches = async () => {
    const rows = (await raw.query(
      `SELECT count(*)::int AS n FROM ${t.messages} WHERE search @@ '苹果'::tsquery`,
    )) as { rows: { n: number }[] } | { n: number }[];
    return (Array.isArray(rows) ? rows : rows.rows)[0]?.n;
  };
  assert.equal(await matches(), 0, "the old vectors do not hold a word inside a clause");
  const query: Query = async <T>(sql: string, params?: readonly unknown[]) => {
    const result = (await raw.query(sql, params ? [...params] : undefined)) as { rows: T[] };
    return result.rows;
  };
  const reopened = await PostgresStore.open(db, options);
  if (distributed) await retokenizeCjk(query, reopened.tables);
  assert.deepEqual(ids(await reopened.searchMessages("苹果")), ["zh"]);
  assert.deepEqual(ids(await reopened.searchMessages('"我喜欢吃苹果"', { sessionId: "a" })), ["zh"]);
  assert.deepEqual(ids(await reopened.searchMessages("apple")), ["en"]);
  assert.deepEqual(
    (await reopened.entries.searchEntries("kb", "香蕉")).map((h) => h.key),
    ["水果"],
  );
  assert.equal(await matches(), 1);
  // A batch at a time: three more clauses, their vectors made old again, re-indexed one row per statement.
  const more = ["东京的天气很好", "사과를 좋아해요", "カメラを買った"];
  for (const [i, text] of more.entries()) await reopened.session("a").appendMessage(msg(`m${i}`, text));
  await raw.query(`UPDATE ${t.messages} SET search = $1::tsvector WHERE id LIKE 'm%'`, [
    `'${sessionLexeme("a")}'`,
  ]);
  assert.deepEqual(ids(await reopened.searchMessages("天气")), []);
  await retokenizeCjk(query, reopened.tables, 1);
  for (const [word, id] of [
    ["天气", "m0"],
    ["사과", "m1"],
    ["カメラ", "m2"],
    ["苹果", "zh"],
  ]) {
    assert.deepEqual(ids(await reopened.searchMessages(word!)), [id], word);
  }
  await reopened.close();
}

test("PGlite: rows indexed before CJK pairs are indexed again on open", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  try {
    await check(db, db, "agent_session");
  } finally {
    await db.close();
  }
});

const unavailable = await postgresUnavailable();
if (unavailable) console.log(`Skipping the Postgres retokenize test: ${unavailable}`);
test("Postgres: rows indexed before CJK pairs are indexed again on open", {
  skip: unavailable ?? false,
}, async () => {
  const pool = testPool();
  const schema = `agent_session_test_retokenize_${process.pid}`;
  try {
    await dropSchema(pool, schema);
    await check(pool, pool, schema);
  } finally {
    await dropSchema(pool, schema);
    await pool.end();
  }
});

if (cluster) {
  test("citus: rows indexed before CJK pairs are indexed again on open", () =>
    check(cluster.pool, cluster.pool, cluster.schema, true));
}
