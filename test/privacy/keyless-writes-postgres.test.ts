// A Postgres store opened without alice's key (no keyring, a keyring without her key, a wrong key), on a schema
// where another store sealed her content, refuses DECRYPT_FAILED every write of her content and every search of
// her, on PGlite, the test server and a Citus cluster: no page holds a refused write, and the keyed store reads her
// rows as they were (docs/PRIVACY.md, "Refusals").
import assert from "node:assert/strict";
import { test } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import type { PostgresSource } from "../../src/postgres/connection/client.js";
import { PostgresStore } from "../../src/postgres/index.js";
import type { PostgresStoreOptions } from "../../src/postgres/schema.js";
import { citusPool, citusUnavailable, markersOnCluster } from "../fixtures/citus-db.js";
import { dropSchema, postgresUnavailable, type Runner, testPool } from "../fixtures/postgres-db.js";
import { randomKeyring } from "../helpers/encryption.js";
import {
  ALICE_SECRET,
  assertRefused,
  assertUntouched,
  CLEAR,
  KEYLESS,
  seedAlice,
} from "../helpers/keyless-writes.js";
import { markersInRelations, total } from "../helpers/purge.js";

/** Seeds alice with a keyed store, runs every refusal with each store lacking her key, and counts pages. */
async function refusesAll(
  db: Runner,
  source: PostgresSource,
  options: PostgresStoreOptions,
  pages: (marker: string) => Promise<number>,
) {
  const keyed = await PostgresStore.open(source, { ...options, keyring: randomKeyring(["alice"]) });
  try {
    const alice = await seedAlice(keyed);
    for (const { name, keyring } of KEYLESS) {
      const store = new PostgresStore(source, { ...options, ...(keyring ? { keyring } : {}) });
      try {
        await assertRefused(store, alice, name);
        const bob = await store.registry.create({ id: `bob-${name}`, name: "bob", owner: "bob" });
        await store
          .session(bob.id)
          .appendMessage({ id: "b0", role: "user", parts: [{ type: "text", text: "bob" }] });
      } finally {
        await store.close();
      }
    }
    await assertUntouched(keyed, alice);
    assert.equal(await pages(CLEAR), 0, "no page holds a refused write");
    assert.equal(await pages(ALICE_SECRET), 0, "alice's content, her stream's chunks included, is sealed");
  } finally {
    await keyed.close();
  }
}

test("PGlite: a store without alice's key refuses every write and search of hers, nothing in clear", async () => {
  const db = await PGlite.create({ extensions: { pageinspect } });
  try {
    const schema = "keyless";
    await refusesAll(db, db, { schema }, async (marker) =>
      total(await markersInRelations(db, schema, marker)),
    );
  } finally {
    await db.close();
  }
});

const unavailable = await postgresUnavailable();
test("Postgres: a store without alice's key refuses every write and search of hers, nothing in clear", {
  skip: unavailable ?? false,
}, async () => {
  const pool = testPool(4);
  const schema = `agent_session_keyless_${process.pid}`;
  try {
    await dropSchema(pool, schema);
    await refusesAll(pool, pool, { schema }, async (marker) =>
      total(await markersInRelations(pool, schema, marker)),
    );
  } finally {
    await dropSchema(pool, schema);
    await pool.end();
  }
});

const noCitus = await citusUnavailable();
test("Citus: a store without alice's key refuses every write and search of hers, nothing in clear on any node", {
  skip: noCitus ?? false,
}, async () => {
  const pool = citusPool(4);
  const schema = `agent_session_keyless_${process.pid}`;
  try {
    await dropSchema(pool, schema);
    await refusesAll(pool, pool, { schema, distributed: true }, async (marker) =>
      total(await markersOnCluster(pool, schema, marker)),
    );
  } finally {
    await dropSchema(pool, schema);
    await pool.end();
  }
});
