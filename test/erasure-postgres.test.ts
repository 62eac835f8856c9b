// Erasure on Postgres: an owner's text is in no page of the store's relations after eraseOwner() and purge(),
// change log included; an erasure stopped by a fault inside a session's transaction leaves that session whole, and
// running it again completes.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { PostgresStore } from "../src/postgres/index.js";
import { dropSchema, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";
import { seedOwners, wholeOrGone } from "./helpers/erasure.js";
import { markersInRelations, purgeUntilComplete, total } from "./helpers/purge.js";

const unavailable = await postgresUnavailable();

describe("Postgres erasure", { skip: unavailable ?? false }, () => {
  const pool = unavailable ? undefined : testPool(4);
  after(() => pool?.end());

  test("after eraseOwner and purge, the owner's text is in no page of the store's relations", async () => {
    const db = pool!;
    const schema = `agent_session_erase_${process.pid}`;
    await dropSchema(db, schema);
    const store = await PostgresStore.open(db, { schema, changeLog: true });
    try {
      const { manager, alice, bob } = await seedOwners(store);
      assert.ok(total(await markersInRelations(db, schema)) > 0);
      const receipt = await manager.eraseOwner("alice");
      assert.deepEqual(receipt.sessionIds.sort(), [...alice].sort());
      assert.equal(receipt.messages, 15);
      assert.equal(receipt.blocks, 3);
      assert.ok(receipt.changes >= 18, `the sessions' change-log rows went: ${receipt.changes}`);
      const report = await purgeUntilComplete(() => store.purge());
      assert.equal(report.complete, true, JSON.stringify(report));
      const left = await markersInRelations(db, schema);
      assert.equal(total(left), 0, JSON.stringify(left));
      assert.equal((await manager.getHistory(bob)).length, 1);
    } finally {
      await store.close();
      await dropSchema(db, schema);
    }
  });

  test("an erasure stopped by a fault mid-session leaves it whole; running it again completes", async () => {
    const db = pool!;
    const schema = `agent_session_erase_crash_${process.pid}`;
    await dropSchema(db, schema);
    const store = await PostgresStore.open(db, { schema });
    try {
      const { manager, alice } = await seedOwners(store);
      const victim = alice[1] ?? "";
      await db.query(`CREATE FUNCTION ${schema}.fault() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF OLD.id = '${victim}' THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN OLD; END $$`);
      await db.query(`CREATE TRIGGER fault BEFORE DELETE ON ${schema}.agent_sessions
        FOR EACH ROW EXECUTE FUNCTION ${schema}.fault()`);
      await assert.rejects(manager.eraseOwner("alice"), /injected fault/);
      assert.ok(await manager.get(victim));
      assert.ok((await wholeOrGone(manager, alice)) >= 1);
      await db.query(`DROP TRIGGER fault ON ${schema}.agent_sessions`);
      await manager.eraseOwner("alice");
      assert.equal(await wholeOrGone(manager, alice), 0);
    } finally {
      await store.close();
      await dropSchema(db, schema);
    }
  });
});
