// The declaration's Citus placement (src/sql/owner-data/postgres.ts `citus`, `citusColumn`) against a distributed store
// on the test cluster: every declared table, the ones made on first use included (change log, vectors), is where the
// declaration says, as Citus's catalog records it: "by-session" distributed by its column and co-located with the
// heads, "by-key" distributed by its column, alone or co-located with the table its `citusColocate` names (the facts'
// sources with the facts), "reference" a reference table, "coordinator" a plain local table. A
// declared table left unplaced on a distributed store (as one a later migration adds would be) is placed when the
// store is next opened; an open that finds every table placed changes nothing.
import assert from "node:assert/strict";
import { test } from "node:test";
import type pg from "pg";
import { PostgresStore } from "../../src/postgres/index.js";
import { POSTGRES_OWNER_DATA } from "../../src/sql/owner-data/postgres.js";
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
  const expected: Record<string, string> = {};
  const actual: Record<string, string> = {};
  for (const [i, t] of POSTGRES_OWNER_DATA.entries()) {
    // A co-located table joins the group of the table its declaration names: the heads for a by-session one.
    const group = t.citus === "by-session" ? "agent_session_heads" : t.citusColocate;
    expected[t.table] =
      t.citus === "by-session" || t.citus === "by-key"
        ? `distributed by ${t.citusColumn ?? "session_id"}${group && group !== t.table ? `, with ${group}` : ""}`
        : t.citus;
    const row = found.get(t.table);
    // The group's first declared table, when it is another: a table declared alone has a group of its own.
    const first = POSTGRES_OWNER_DATA.slice(0, i).find(
      (o) => found.get(o.table)?.kind === "distributed" && found.get(o.table)?.colocation === row?.colocation,
    );
    actual[t.table] = !row
      ? "missing"
      : row.kind === "distributed"
        ? `distributed by ${row.column}${first ? `, with ${first.table}` : ""}`
        : (row.kind ?? "?");
  }
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
  const first = cluster!.store();
  await first.session("late").appendMessage(msg("m1", "before"));
  await first.facts.add({ sessionId: "late" }, [
    {
      id: "f1",
      text: "Late words.",
      observedAt: 1,
      sources: [{ sessionId: "late", messageId: "m1" }],
      producer: "function:t",
    },
  ]);
  await first.streams.start("late", "x", 1);
  await first.streams.append("late", "x", [{ seq: 0, chunk: "kept before" }], 2);
  await pool.query(`INSERT INTO ${table("agent_owner_keys")} (owner_hash, key_check) VALUES ('h', 'c')`);
  // As a table a later migration creates on a store distributed before it: a plain coordinator table, one of each
  // placement, rows kept (the fact tables, as a store distributed before they were placed has them). Citus cannot
  // undistribute a table with an identity column (the overlays' and the facts' seq): those are copied to a plain
  // table with their rows and sequence, dropped and renamed back, as a migration would make them. The links' key is made as for one server,
  // without the distribution column.
  const late = [
    "agent_compactions",
    "agent_facts",
    "agent_attachment_links",
    "agent_context_blocks",
    "agent_owner_keys",
    "agent_fact_sources",
    "agent_learn_marks",
    // Plain coordinator tables on a store distributed before they were declared by session.
    "agent_streams",
    "agent_stream_chunks",
  ];
  for (const name of ["agent_fact_sources", "agent_learn_marks", "agent_streams", "agent_stream_chunks"])
    await pool.query("SELECT undistribute_table($1)", [table(name)]);
  for (const name of late.slice(0, 2)) {
    await pool.query(
      `CREATE TABLE ${table(`plain_${name}`)} (LIKE ${table(name)} INCLUDING ALL);
       INSERT INTO ${table(`plain_${name}`)} OVERRIDING SYSTEM VALUE SELECT * FROM ${table(name)};
       DROP TABLE ${table(name)};
       ALTER TABLE ${table(`plain_${name}`)} RENAME TO "${name}";
       SELECT setval(pg_get_serial_sequence('${table(name)}', 'seq'), (SELECT COALESCE(max(seq), 0) + 1 FROM ${table(name)}))`,
    );
  }
  for (const name of late.slice(2, 5)) await pool.query("SELECT undistribute_table($1)", [table(name)]);
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
    // The fact written before is found where its scope's shard is, and a new one goes there too.
    const scope = { sessionId: "late" };
    await store.facts.add(scope, [
      {
        id: "f2",
        text: "Later words.",
        observedAt: 2,
        sources: [{ sessionId: "late", messageId: "m2" }],
        producer: "function:t",
      },
    ]);
    assert.deepEqual((await store.facts.search(scope, "words")).map((h) => h.fact.id).sort(), ["f1", "f2"]);
    // The stream kept before is read on its session's shard, and appended to there.
    assert.equal(await store.streams.append("late", "x", [{ seq: 1, chunk: "kept after" }], 3), true);
    assert.deepEqual((await store.streams.read("late", "x", -1, 10))?.chunks, [
      { seq: 0, chunk: "kept before" },
      { seq: 1, chunk: "kept after" },
    ]);
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
