// The declaration's Citus placement (src/postgres/owner-data.ts `citus`, `citusColumn`) against a distributed store
// on the test cluster: every declared table, the ones made on first use included (change log, vectors), is where the
// declaration says, as Citus's catalog records it: "by-session" distributed by its column and co-located with the
// heads, "by-key" distributed by its column, "reference" a reference table, "coordinator" a plain local table. A
// declared table left unplaced on a distributed store (as one a later migration adds would be) is placed when the
// store is next opened; an open that finds every table placed changes nothing.
import assert from "node:assert/strict";
import { test } from "node:test";
import type pg from "pg";
import { PostgresStore } from "../../src/postgres/index.js";
import { POSTGRES_OWNER_DATA } from "../../src/postgres/owner-data.js";
import { msg } from "../../src/testing/contract/harness.js";
import { citusSchema } from "../fixtures/citus-db.js";
import { testEmbedder } from "../vectors/embedder.js";

const cluster = await citusSchema("placement");
const skip = cluster ? false : "no Citus cluster";

/** Each declared table's placement as the declaration says and as `pg_dist_partition` records it, and the tables on
 * the cluster the declaration does not place. */
async function placements(pool: pg.Pool, schema: string) {
  const { rows } = await pool.query<{
    table: string;
    kind: string | null;
    column: string | null;
    colocation: number | null;
  }>(
    `SELECT c.relname AS table,
        CASE WHEN p.logicalrelid IS NULL THEN 'coordinator'
             WHEN p.partmethod = 'h' THEN 'distributed'
             WHEN p.repmodel = 't' THEN 'reference'
             ELSE 'citus local' END AS kind,
        CASE WHEN p.partmethod = 'h' THEN column_to_column_name(p.logicalrelid, p.partkey) END AS column,
        p.colocationid AS colocation
      FROM pg_class c LEFT JOIN pg_dist_partition p ON p.logicalrelid = c.oid
      WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r'`,
    [schema],
  );
  const found = new Map(rows.map((row) => [row.table, row]));
  const heads = found.get("agent_session_heads")?.colocation;
  const expected: Record<string, string> = {};
  const actual: Record<string, string> = {};
  for (const t of POSTGRES_OWNER_DATA) {
    expected[t.table] =
      t.citus === "by-session"
        ? `distributed by ${t.citusColumn ?? "session_id"}, with the heads`
        : t.citus === "by-key"
          ? `distributed by ${t.citusColumn}`
          : t.citus;
    const row = found.get(t.table);
    actual[t.table] = !row
      ? "missing"
      : row.kind === "distributed"
        ? `distributed by ${row.column}${row.colocation === heads && t.table !== "agent_session_heads" ? ", with the heads" : ""}`
        : (row.kind ?? "?");
  }
  // The heads anchor their group; a by-key table in the heads' group would be a coincidence of equal shard counts.
  expected.agent_session_heads = "distributed by session_id";
  const undeclared = [...found.keys()].filter((name) => !POSTGRES_OWNER_DATA.some((t) => t.table === name));
  return { actual, expected, undeclared };
}

test("every declared table is placed on the cluster as the declaration says", { skip }, async () => {
  const { pool, schema } = cluster!;
  // Tables made on first use: the vectors when a store with an embedder opens, the change log on a logged write.
  const store = cluster!.store({ embedder: testEmbedder().embed, changeLog: true });
  await store.session("s").appendMessage(msg("m", "car words"));
  await store.vectors?.idle();
  const { actual, expected, undeclared } = await placements(pool, schema);
  assert.deepEqual(actual, expected);
  assert.deepEqual(undeclared, [], "tables on the cluster the declaration does not place");
});

test("a declared table left unplaced on a distributed store is placed when the store is opened", {
  skip,
}, async () => {
  const { pool, schema } = cluster!;
  const table = (name: string) => `"${schema}"."${name}"`;
  await cluster!.store().session("late").appendMessage(msg("m1", "before"));
  await pool.query(`INSERT INTO ${table("agent_owner_keys")} (owner_hash, key_check) VALUES ('h', 'c')`);
  // As a table a later migration creates on a store distributed before it: a plain coordinator table, one of each
  // placement, rows kept. Citus cannot undistribute a table with an identity column (the overlays' seq): that one
  // is dropped and made again plain, as a migration would make it. The links' key is made as for one server,
  // without the distribution column.
  const late = ["agent_compactions", "agent_attachment_links", "agent_context_blocks", "agent_owner_keys"];
  await pool.query(
    `CREATE TABLE ${table("plain_compactions")} (LIKE ${table("agent_compactions")} INCLUDING ALL);
     DROP TABLE ${table("agent_compactions")};
     ALTER TABLE ${table("plain_compactions")} RENAME TO "agent_compactions"`,
  );
  for (const name of late.slice(1)) await pool.query("SELECT undistribute_table($1)", [table(name)]);
  const before = await placements(pool, schema);
  assert.deepEqual(
    late.map((name) => before.actual[name]),
    late.map(() => "coordinator"),
  );
  const store = await PostgresStore.open(pool, { schema, distributed: true });
  try {
    assert.deepEqual((await placements(pool, schema)).actual, before.expected);
    const { rows } = await pool.query<{ key: string }>(
      `SELECT pg_get_constraintdef(oid) AS key FROM pg_constraint
        WHERE conrelid = $1::regclass AND contype = 'p'`,
      [table("agent_attachment_links")],
    );
    assert.deepEqual(rows, [{ key: "PRIMARY KEY (session_id, message_seq, hash)" }]);
    const keys = await pool.query(`SELECT owner_hash, key_check FROM ${table("agent_owner_keys")}`);
    assert.deepEqual(keys.rows, [{ owner_hash: "h", key_check: "c" }]);
    const session = store.session("late");
    await session.appendMessage(msg("m2", "after"));
    assert.deepEqual(
      (await session.getHistory()).map((m) => m.id),
      ["m1", "m2"],
    );
  } finally {
    await store.close();
  }
});

test("opening a store whose tables are all placed changes nothing", { skip }, async () => {
  const { pool, schema } = cluster!;
  const sent: string[] = [];
  const store = await PostgresStore.open(recording(pool, sent), { schema, distributed: true });
  await store.close();
  const changes = sent.filter((text) =>
    /^\s*(BEGIN|CREATE|ALTER|DROP)\b|create_distributed_table|create_reference_table/i.test(text),
  );
  assert.deepEqual(changes, []);
  // The placement check is one catalog read beside the one that finds the store distributed.
  assert.equal(sent.filter((text) => text.includes("pg_dist_partition")).length, 2);
});

/** `pool`, with the text of every statement sent through it or a connection it lends pushed to `sent`. */
function recording(pool: pg.Pool, sent: string[]): pg.Pool {
  const record = <T extends { query: (...args: never[]) => unknown }>(target: T): T =>
    new Proxy(target, {
      get(object, property) {
        if (property === "query")
          return (...args: [string | { text: string }, ...unknown[]]) => {
            sent.push(typeof args[0] === "string" ? args[0] : args[0].text);
            return (object.query as (...a: unknown[]) => unknown)(...args);
          };
        if (property === "connect" && object === (pool as unknown))
          return async () => record(await pool.connect());
        const value: unknown = Reflect.get(object, property, object);
        return typeof value === "function" && property !== "Client" ? value.bind(object) : value;
      },
    });
  return record(pool);
}
