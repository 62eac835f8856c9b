// The test fixtures' resets (test/fixtures/postgres-db.ts truncateAll, citus-db.ts emptyAll) take their tables from
// the Postgres owner-data declaration: after a store wrote a session with messages and a payload, facts, a LangGraph
// thread's checkpoints, store items, an owner's key check, the change log and vectors, truncateAll leaves every
// declared table empty but the ones holding the store's structure, and the store opens and writes again after it;
// on a store whose optional features never ran, it leaves their missing tables out instead of failing.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { SessionMessage } from "../src/contract/message.js";
import { PostgresStore } from "../src/postgres/index.js";
import { qualified, type Tables } from "../src/sql/engines/postgres/tables.js";
import { POSTGRES_OWNER_DATA } from "../src/sql/owner-data/postgres.js";
import { msg } from "../src/testing/contract/harness.js";
import { randomKeyring, seedAlice } from "../src/testing/privacy/keyless-writes.js";
import {
  inOwnSchema,
  KEPT_BY_RESET,
  postgresUnavailable,
  type Runner,
  truncateAll,
} from "./fixtures/postgres-db.js";
import { testEmbedder } from "./vectors/embedder.js";

/** A PNG of 600 bytes as a data URL: over the size from which media is offloaded (message/media.ts). */
const IMAGE = `data:image/png;base64,${btoa(String.fromCharCode(...new Uint8Array(600).fill(7)))}`;

/** The rows of every declared table there, by its name under the prefix (a table not made left out). */
async function rowCounts(db: Runner, t: Tables): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const { table } of POSTGRES_OWNER_DATA) {
    const name = qualified(t, table);
    const { rows } = await db.query("SELECT to_regclass($1) IS NOT NULL AS found", [name]);
    if (!(rows[0] as { found: boolean }).found) continue;
    const counted = await db.query(`SELECT count(*)::int AS n FROM ${name}`);
    counts[table] = (counted.rows[0] as { n: number }).n;
  }
  return counts;
}

const reason = await postgresUnavailable();
if (reason) console.log(`Skipping the fixtures' resets on Postgres: ${reason}`);

test("the structure's tables a reset keeps are declared ones", () => {
  const declared = new Set(POSTGRES_OWNER_DATA.map((d) => d.table));
  assert.deepEqual(
    [...KEPT_BY_RESET].filter((table) => !declared.has(table)),
    [],
  );
});

test("truncateAll empties every declared table a store wrote, and the store writes again after it", {
  skip: reason ?? false,
}, async () => {
  await inOwnSchema("fixtures_reset", async (pool, schema) => {
    const options = {
      schema,
      changeLog: true,
      embedder: testEmbedder().embed,
      keyring: randomKeyring(["alice"]),
    };
    const store = await PostgresStore.open(pool, options);
    const t = store.tables;
    try {
      // Alice's sealed session: a message, summary, block, entry, stream, checkpoints, facts and store items.
      const alice = await seedAlice(store);
      await store.facts.claim(alice, "reset", Date.now(), Date.now() + 60_000);
      await store.facts.advance(alice, "reset", 1, 0);
      // A session in clear, embedded, with an offloaded image.
      const bob = store.session("bob");
      await bob.appendMessage(msg("b0", "bob drives a car"));
      const image = {
        id: "img",
        role: "user",
        parts: [{ type: "file", mediaType: "image/png", url: IMAGE }],
      };
      await bob.appendMessage(image as unknown as SessionMessage);
      await store.vectors?.backfill();
      const written = await rowCounts(pool, t);
      // Every declared table the writes above reach holds rows, so the emptiness after is not a given.
      const unwritten = Object.keys(written).filter((table) => written[table] === 0);
      assert.deepEqual(unwritten.sort(), ["agent_adoptions", "agent_owner_rekeys"]);
      assert.deepEqual(
        POSTGRES_OWNER_DATA.map((d) => d.table).filter((table) => !(table in written)),
        [],
        "every declared table is there",
      );

      await truncateAll(pool, t);
      const left = await rowCounts(pool, t);
      // Rows left only in the structure's tables (the version, the vectors' size), which a reset keeps.
      assert.deepEqual(
        Object.keys(left).filter((table) => left[table] !== 0),
        ["agent_session_schema", "agent_vector_state"],
        "declared tables the reset left rows in",
      );
      assert.equal(left.agent_session_schema, written.agent_session_schema, "the schema version is kept");
    } finally {
      await store.close();
    }
    // The version kept, a store opens on the emptied tables without migrating, and writes.
    const again = await PostgresStore.open(pool, { schema });
    try {
      await again.session("carol").appendMessage(msg("c0"));
      assert.equal((await again.session("carol").getHistory()).length, 1);
    } finally {
      await again.close();
    }
  });
});

test("truncateAll leaves out the tables of optional features a store never used", {
  skip: reason ?? false,
}, async () => {
  await inOwnSchema("fixtures_reset_plain", async (pool, schema) => {
    const store = await PostgresStore.open(pool, { schema });
    try {
      await store.session("a").appendMessage(msg("a0"));
      const optional = POSTGRES_OWNER_DATA.filter((d) => d.madeBy).map((d) => d.table);
      assert.ok(optional.length > 0);
      const before = await rowCounts(pool, store.tables);
      assert.deepEqual(
        optional.filter((table) => table in before),
        [],
        "no optional table is made yet",
      );
      await truncateAll(pool, store.tables);
      const after = await rowCounts(pool, store.tables);
      assert.equal(after.agent_messages, 0);
      assert.equal(after.agent_sessions, 0);
    } finally {
      await store.close();
    }
  });
});
