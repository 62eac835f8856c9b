// Encryption at rest on a Citus cluster (docs/POSTGRES.md, "Past one server"; docs/PRIVACY.md): the cases of
// encryption-postgres.test.ts with `distributed: true`. The key checks and rotations are reference tables (a copy
// on every node); no page of any shard on any worker holds an encrypted owner's plaintext; a wrong or missing key
// is DECRYPT_FAILED and writes nothing; erasing the owner destroys its key and removes its check everywhere.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { PostgresStore } from "../src/postgres/index.js";
import { msg } from "../src/testing/contract/harness.js";
import { citusPool, citusUnavailable, markersOnCluster } from "./fixtures/citus-db.js";
import { dropSchema } from "./fixtures/postgres-db.js";
import { randomKeyring, SECRET, said, seedOwners, textOf } from "./helpers/encryption.js";
import { readsBack, refusals } from "./helpers/encryption-postgres.js";
import { total } from "./helpers/purge.js";

const unavailable = await citusUnavailable();
if (unavailable) console.log(`Skipping the Citus encryption tests: ${unavailable}`);

describe("Citus encryption at rest", { skip: unavailable ?? false }, () => {
  const pool = unavailable ? undefined : citusPool(4);
  after(() => pool?.end());

  test("sealed round trip on the cluster; no plaintext in any shard; refusals; the key tables are reference tables", async () => {
    const schema = `agent_session_citus_seal_${process.pid}`;
    const db = pool!;
    await dropSchema(db, schema);
    const options = { schema, distributed: true };
    const store = await PostgresStore.open(db, { ...options, keyring: randomKeyring(["alice"]) });
    try {
      const { rows: kinds } = await db.query<{ name: string; kind: string }>(
        `SELECT logicalrelid::text AS name, partmethod AS kind FROM pg_dist_partition
         WHERE logicalrelid::text LIKE $1 ORDER BY 1`,
        [`${schema}.agent_owner_%`],
      );
      assert.deepEqual(
        kinds.map((k) => k.kind),
        ["n", "n"],
        `the key checks and rotations are reference tables: ${JSON.stringify(kinds)}`,
      );
      const { alice, bob } = await seedOwners(store);
      await readsBack(store, alice);
      await store.session(alice).appendMessage(msg("a9", said(9)));
      assert.equal(textOf(await store.session(alice).getMessage("a9")), said(9));
      assert.equal(total(await markersOnCluster(db, schema, said(1))), 0);
      assert.equal(total(await markersOnCluster(db, schema, SECRET)), 0, "nor in any index");
      assert.ok(
        total(await markersOnCluster(db, schema, "bob plain words")) > 0,
        "the check reads the shards",
      );
      await refusals(db, options, alice, bob);
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM "${schema}".agent_messages`);
      assert.equal((rows[0] as { n: number }).n, 8, "nothing was written by the refused appends");
    } finally {
      await store.close();
      await dropSchema(db, schema);
    }
  });

  test("the blind index on the cluster: an owner's and a session's search find sealed messages by their words", async () => {
    const schema = `agent_session_citus_blind_${process.pid}`;
    const db = pool!;
    await dropSchema(db, schema);
    const store = await PostgresStore.open(db, {
      schema,
      distributed: true,
      keyring: randomKeyring(["alice"]),
    });
    try {
      const { alice } = await seedOwners(store);
      const ids = (hits: { id: string }[]) => hits.map((h) => h.id).sort();
      // The owner-wide search fans out over the shards (search/fan-out.ts); the session's routes to one.
      assert.deepEqual(ids(await store.searchMessages(SECRET, { owner: "alice" })), [
        "a0",
        "a1",
        "a2",
        "a3",
        "a4",
        "a5",
      ]);
      assert.deepEqual(ids(await store.searchMessages(SECRET, { sessionId: alice, match: "all" })).length, 6);
      assert.deepEqual(
        ids(await store.searchMessages(SECRET)),
        [],
        "a store-wide search finds text in clear only",
      );
      assert.deepEqual(ids(await store.searchMessages("bob plain")), ["b0"]);
    } finally {
      await store.close();
      await dropSchema(db, schema);
    }
  });

  test("eraseOwner on the cluster forgets the key and removes its check", async () => {
    const schema = `agent_session_citus_shred_${process.pid}`;
    const db = pool!;
    await dropSchema(db, schema);
    const keyring = randomKeyring(["alice"]);
    const store = await PostgresStore.open(db, { schema, distributed: true, keyring });
    try {
      const { manager, alice } = await seedOwners(store);
      const checks = async () =>
        (
          (await db.query(`SELECT count(*)::int AS n FROM "${schema}".agent_owner_keys`)).rows[0] as {
            n: number;
          }
        ).n;
      assert.equal(await checks(), 1);
      await manager.eraseOwner("alice");
      assert.equal(keyring.keys.has("alice"), false);
      assert.equal(await checks(), 0);
      assert.equal(await store.session(alice).getMessage("a1"), null);
    } finally {
      await store.close();
      await dropSchema(db, schema);
    }
  });
});
