// Erasure on Postgres: an owner's text is in no page of the store's relations after eraseOwner() and purge(),
// change log included; an erasure stopped by a fault inside a session's transaction leaves that session whole, and
// running it again completes.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type pg from "pg";
import { PostgresStore } from "../src/postgres/index.js";
import { citusSchema, markersOnCluster } from "./fixtures/citus-db.js";
import { ownDatabasePool } from "./fixtures/own-database.js";
import { dropSchema, postgresUnavailable } from "./fixtures/postgres-db.js";
import { seedOwners, wholeOrGone } from "./helpers/erasure.js";
import { markersInRelations, purgeUntilComplete, total } from "./helpers/purge.js";

/** A store of a case on an empty place, its pool, its schema and the pages holding the marker there. */
interface Place {
  store: PostgresStore;
  db: pg.Pool;
  schema: string;
  sessions: string;
  markers(): Promise<Record<string, number>>;
}

/**
 * Runs a trigger's `ddl`; on a cluster with citus.enable_unsafe_triggers for its transaction, since Citus refuses
 * triggers on distributed tables otherwise (they run on the shards and must not reach other shards; this one reads
 * nothing).
 */
async function triggerDdl(db: pg.Pool, ddl: string): Promise<void> {
  const client = await db.connect();
  try {
    await client.query("BEGIN");
    await client.query(`DO $$ BEGIN
      IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        PERFORM set_config('citus.enable_unsafe_triggers', 'on', true); END IF; END $$`);
    await client.query(ddl);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}

function erasureCases(
  name: string,
  skip: string | false,
  place: (tag: string) => Promise<Place>,
  done: () => Promise<void>,
) {
  describe(`${name} erasure`, { skip }, () => {
    test("after eraseOwner and purge, the owner's text is in no page of the store's relations", async () => {
      const { store, markers } = await place("erase");
      try {
        const { manager, alice, bob } = await seedOwners(store);
        assert.ok(total(await markers()) > 0);
        const receipt = await manager.eraseOwner("alice");
        assert.deepEqual(receipt.sessionIds.sort(), [...alice].sort());
        assert.equal(receipt.messages, 15);
        assert.equal(receipt.blocks, 3);
        assert.ok(receipt.changes >= 18, `the sessions' change-log rows went: ${receipt.changes}`);
        const report = await purgeUntilComplete(() => store.purge());
        assert.equal(report.complete, true, JSON.stringify(report));
        const left = await markers();
        assert.equal(total(left), 0, JSON.stringify(left));
        assert.equal((await manager.getHistory(bob)).length, 1);
      } finally {
        await store.close();
        await done();
      }
    });

    test("an erasure stopped by a fault mid-session leaves it whole; running it again completes", async () => {
      const { store, db, schema, sessions } = await place("erase_crash");
      try {
        const { manager, alice } = await seedOwners(store);
        const victim = alice[1] ?? "";
        await db.query(`CREATE FUNCTION "${schema}".fault() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN IF OLD.id = '${victim}' THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN OLD; END $$`);
        await triggerDdl(
          db,
          `CREATE TRIGGER fault BEFORE DELETE ON ${sessions} FOR EACH ROW EXECUTE FUNCTION "${schema}".fault()`,
        );
        try {
          await assert.rejects(manager.eraseOwner("alice"), /injected fault/);
          assert.ok(await manager.get(victim));
          assert.ok((await wholeOrGone(manager, alice)) >= 1);
        } finally {
          await triggerDdl(db, `DROP TRIGGER fault ON ${sessions}`);
          await db.query(`DROP FUNCTION "${schema}".fault()`);
        }
        await manager.eraseOwner("alice");
        assert.equal(await wholeOrGone(manager, alice), 0);
      } finally {
        await store.close();
        await done();
      }
    });
  });
}

const unavailable = await postgresUnavailable();
// The cluster: one distributed schema, emptied for each case; its pages are read on every node. Set up before any
// case is registered (see postgres-transfer.test.ts).
const cluster = await citusSchema("erasure");
// The server's cases on a database of their own: other test files' transactions do not hold their purges back.
const pool = await ownDatabasePool("erasure_postgres", unavailable);
let schema = "";
erasureCases(
  "Postgres",
  unavailable ?? false,
  async (tag) => {
    schema = `agent_session_${tag}_${process.pid}`;
    await dropSchema(pool!, schema);
    const store = await PostgresStore.open(pool!, { schema, changeLog: tag === "erase" });
    const markers = () => markersInRelations(pool!, schema);
    return { store, db: pool!, schema, sessions: `"${schema}"."agent_sessions"`, markers };
  },
  () => dropSchema(pool!, schema),
);
if (cluster) {
  erasureCases(
    "citus",
    false,
    async (tag) => {
      await cluster.reset();
      const store = cluster.store({ changeLog: tag === "erase" });
      const markers = () => markersOnCluster(cluster.pool, cluster.schema);
      return { store, db: cluster.pool, schema: cluster.schema, sessions: cluster.tables.sessions, markers };
    },
    async () => undefined,
  );
}
