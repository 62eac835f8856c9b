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
import { dropSchema, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
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
    await refusesAll(db, { schema }, async (marker) => total(await markersInRelations(db, schema, marker)));
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
    await refusesAll(pool, { schema }, async (marker) =>
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
    await refusesAll(pool, { schema, distributed: true }, async (marker) =>
      total(await markersOnCluster(pool, schema, marker)),
    );
  } finally {
    await dropSchema(pool, schema);
    await pool.end();
  }
});

/**
 * A store without a keyring appends to bob's session twice (the second under the clear guard it found, no look-up),
 * another store seals bob's next message (bob has a key check now): the next append in clear is refused.
 */
async function clearGuardRefuses(source: PostgresSource, options: PostgresStoreOptions) {
  const plain = new PostgresStore(source, options);
  const keyed = new PostgresStore(source, { ...options, keyring: randomKeyring(["bob"]) });
  const text = (id: string, t = id) => ({
    id,
    role: "user" as const,
    parts: [{ type: "text" as const, text: t }],
  });
  try {
    const { id } = await plain.registry.create({ id: "bob-guarded", name: "bob", owner: "bob" });
    await plain.session(id).appendMessage(text("c0"));
    await plain.session(id).appendMessage(text("c1"));
    await keyed.session(id).appendMessage(text("k2", `k2 ${CLEAR}`));
    await assert.rejects(plain.session(id).appendMessage(text("c3", `c3 ${CLEAR}`)), {
      code: "DECRYPT_FAILED",
    });
    assert.deepEqual(
      (await keyed.session(id).getHistory()).map((m) => m.id),
      ["c0", "c1", "k2"],
    );
  } finally {
    await plain.close();
    await keyed.close();
  }
}

test("PGlite: an append in clear under the clear guard is refused once another store gave the owner a key", async () => {
  const db = await PGlite.create();
  try {
    await clearGuardRefuses(db, { schema: "guarded" });
  } finally {
    await db.close();
  }
});

test("Citus: a routed append in clear checks its clear guard on the worker and is refused once the owner has a key", {
  skip: noCitus ?? false,
}, async () => {
  const pool = citusPool(4);
  const schema = `agent_session_keyless_guard_${process.pid}`;
  try {
    await dropSchema(pool, schema);
    await clearGuardRefuses(pool, { schema, distributed: true });
  } finally {
    await dropSchema(pool, schema);
    await pool.end();
  }
});
