// The declaration of owner data (src/store/owner-data.ts) against the schema the code makes: a fresh SQLite database
// and a fresh Postgres schema, migrated and with every table made on first use (change log, vectors, sqlite-vec,
// statistics), hold no table and no text or bytes column the backend's declaration does not classify; every table
// it declares exists; and docs/PRIVACY.md holds the declarations as rendered.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, test } from "node:test";
import { PostgresStore } from "../../src/postgres/store.js";
import { tableNames } from "../../src/sql/engines/postgres/tables.js";
import { factVectorColumnSql } from "../../src/sql/facts/postgres-vectors.js";
import { POSTGRES_OWNER_DATA } from "../../src/sql/owner-data/postgres.js";
import { SQLITE_OWNER_DATA } from "../../src/sql/owner-data/sqlite.js";
import { ROOMS } from "../../src/sql/rooms/list.js";
import { tableStatements, vectorTables } from "../../src/sql/vectors/postgres-schema.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { CODEC_KINDS, roomKind } from "../../src/store/crypto/row-codec.js";
import {
  citusShards,
  type OwnerDataDeclaration,
  type OwnerDataTable,
  ownerDataMarkdown,
} from "../../src/store/owner-data.js";
import { msg } from "../../src/testing/contract/harness.js";
import { dropSchema, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { testEmbedder } from "../vectors/embedder.js";

/** The schema's tables, each with its columns that hold text or bytes. */
type Schema = Map<string, string[]>;

/** What is in `schema` and not declared, and what is declared (made by migrations) and not in it. */
function compare(declaration: OwnerDataDeclaration, schema: Schema) {
  const declared = new Map(declaration.map((t) => [t.table, t]));
  const undeclared: string[] = [];
  for (const [table, columns] of schema) {
    const entry = declared.get(table);
    if (!entry) undeclared.push(table);
    else for (const column of columns) if (!(column in entry.columns)) undeclared.push(`${table}.${column}`);
  }
  const missing = declaration.filter((t) => !schema.has(t.table)).map((t) => t.table);
  return { undeclared, missing };
}

test("every SQLite table and text/blob column is declared, and every declared table is made", async () => {
  const store = new SqliteStore(":memory:", { changeLog: true, embedder: testEmbedder().embed });
  try {
    // The change log, the vector tables and sqlite-vec's (on the first vector), then statistics, as an app's
    // ANALYZE or PRAGMA optimize would make them.
    await store.session("s").appendMessage(msg("m", "car engine words"));
    // A fact, embedded: its vector's column and the index of the facts still to embed.
    await store.facts.add({ sessionId: "s" }, [
      {
        text: "The user has a car.",
        observedAt: 0,
        sources: [{ sessionId: "s", messageId: "m" }],
        producer: "test",
      },
    ]);
    await store.vectors?.idle();
    store.driver.run("ANALYZE");
    const schema: Schema = new Map();
    const tables = store.driver.column<string>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'sqlite_sequence' ORDER BY name",
    );
    for (const table of tables) {
      const columns = store.driver.all<{ name: string; type: string }>(
        "SELECT name, type FROM pragma_table_info(?)",
        [table],
      );
      // TEXT, BLOB and untyped (a virtual table's, FTS5's shadow tables') columns can hold text or bytes.
      schema.set(
        table,
        columns.filter((c) => !/^(INTEGER|REAL)$/i.test(c.type)).map((c) => c.name),
      );
    }
    // sqlite_stat4 exists only where SQLite was built with STAT4 (better-sqlite3's is; node:sqlite's is not).
    const stat4 = store.driver
      .column<string>("SELECT compile_options FROM pragma_compile_options")
      .includes("ENABLE_STAT4");
    const missing = stat4 ? [] : ["sqlite_stat4"];
    assert.deepEqual(compare(SQLITE_OWNER_DATA, schema), { undeclared: [], missing });
  } finally {
    await store.close();
  }
});

const unavailable = await postgresUnavailable();
const pool = unavailable ? undefined : testPool(2);
if (pool) after(() => pool.end());

// Numbers, flags and times hold no owner's text; every other type (text, bytea, tsvector, arrays, vector) does.
const NOT_TEXT =
  /^(bigint|integer|smallint|boolean|double precision|real|numeric|timestamp with time zone|bigint\[\]|integer\[\])$/;

test("every Postgres table and text/bytes column is declared, and every declared table is made", {
  skip: unavailable ?? false,
}, async () => {
  const schema = `agent_session_owner_data_${process.pid}`;
  const db = pool!;
  await dropSchema(db, schema);
  const store = await PostgresStore.open(db, { schema, changeLog: true });
  try {
    await store.session("s").appendMessage(msg("m", "words"));
    for (const statement of tableStatements(vectorTables(tableNames({ schema })))) await db.query(statement);
    // The facts' vector column, as a store with an embedder adds it.
    for (const statement of factVectorColumnSql(tableNames({ schema }))) await db.query(statement);
    const { rows } = await db.query<{ table: string; column: string; type: string }>(
      `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type
        FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
        WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped`,
      [schema],
    );
    const found: Schema = new Map();
    for (const row of rows) {
      const columns = found.get(row.table) ?? [];
      if (!NOT_TEXT.test(row.type)) columns.push(row.column);
      found.set(row.table, columns);
    }
    assert.deepEqual(compare(POSTGRES_OWNER_DATA, found), { undeclared: [], missing: [] });
  } finally {
    await store.close();
    await dropSchema(db, schema);
  }
});

test("docs/PRIVACY.md holds both declarations as rendered", () => {
  const doc = readFileSync(new URL("../../docs/PRIVACY.md", import.meta.url), "utf8");
  for (const [name, declaration] of [
    ["SQLite", SQLITE_OWNER_DATA],
    ["Postgres", POSTGRES_OWNER_DATA],
  ] as const) {
    assert.ok(
      doc.includes(ownerDataMarkdown(declaration)),
      `PRIVACY.md's ${name} table differs from the declaration; print it with ` +
        "`node --import tsx scripts/owner-data-table.ts` and paste it",
    );
  }
});

test("the Citus shards of the declaration: facts by scope with their sources, marks with the sessions", () => {
  const shards = new Map(citusShards(POSTGRES_OWNER_DATA).map((s) => [s.table, s]));
  assert.deepEqual(shards.get("agent_facts"), { table: "agent_facts", column: "scope", colocate: "none" });
  assert.deepEqual(shards.get("agent_fact_sources"), {
    table: "agent_fact_sources",
    column: "scope",
    colocate: "agent_facts",
  });
  assert.equal(shards.get("agent_learn_marks")?.colocate, "agent_session_heads");
  // A table co-located with one not declared by-key before it cannot be placed: the group would not exist yet.
  const table = (name: string, extra: Partial<OwnerDataTable>): OwnerDataTable => ({
    table: name,
    holds: "",
    tie: "none",
    citus: "by-key",
    citusColumn: "k",
    sealed: "n/a",
    erasure: "",
    purge: "rewrite",
    columns: {},
    ...extra,
  });
  assert.throws(
    () => citusShards([table("b", { citusColocate: "a" }), table("a", {})]),
    /b is co-located with a, which is not a by-key table before it/,
  );
  assert.throws(
    () => citusShards([table("a", { citus: "reference" }), table("b", { citusColocate: "a" })]),
    /not a by-key table before it/,
  );
});

// Sealing is declared, not threaded by hand (store/crypto/row-codec.ts): every content column of a table sealed for
// a keyed owner names the codec kind that seals it (or "clear", a known gap PRIVACY.md lists), only sealed tables
// name kinds, each named column is declared, and every kind the codec or a room has seals some column.
for (const [name, declaration] of [
  ["SQLite", SQLITE_OWNER_DATA],
  ["Postgres", POSTGRES_OWNER_DATA],
] as const) {
  test(`${name}: every sealed table's content columns name their codec kind, and every kind is used`, () => {
    const problems: string[] = [];
    const used = new Set<string>();
    for (const t of declaration) {
      const sealedAs = t.sealedAs ?? {};
      if (t.sealed !== "sealed" && t.sealedAs !== undefined)
        problems.push(`${t.table}: not sealed, names kinds`);
      for (const [column, kind] of Object.entries(sealedAs)) {
        if (!(column in t.columns)) problems.push(`${t.table}.${column}: a kind for an undeclared column`);
        if (kind !== "clear") used.add(kind);
      }
      if (t.sealed !== "sealed") continue;
      for (const [column, holds] of Object.entries(t.columns)) {
        if (holds === "content" && !(column in sealedAs))
          problems.push(`${t.table}.${column}: no codec kind`);
      }
    }
    for (const kind of [...CODEC_KINDS, ...ROOM_KINDS.map((k) => k.name)])
      if (!used.has(kind)) problems.push(`kind ${kind}: no declared column`);
    assert.deepEqual(problems, []);
  });
}

const ROOM_KINDS = ROOMS.flatMap((room) => room.sealed ?? []);

// A room's kind is the codec's guarantee too: its name and scope are its own, so its values never open as another
// kind's (a value copied between tables of two rooms, or from a message, is refused).
test("the rooms' sealed kinds have names and scope prefixes of their own", () => {
  const names = ROOM_KINDS.map((k) => k.name);
  const prefixes = ROOM_KINDS.map((k) => k.prefix);
  assert.ok(names.length >= 2, "the checkpoints' and the graph store's kinds are listed");
  assert.equal(new Set(names).size, names.length, `a name twice: ${names.join(", ")}`);
  assert.equal(new Set(prefixes).size, prefixes.length, "a scope prefix twice");
  const scope = { prefix: "x:", scope: () => "", id: () => "", what: () => "" };
  for (const taken of ["message", "fact"]) assert.throws(() => roomKind(taken, scope), /a name of its own/);
  for (const prefix of ["fact:", "a:b:", "Item:", "item", ""])
    assert.throws(() => roomKind("mine", { ...scope, prefix }), /one lowercase word and a colon/);
});
