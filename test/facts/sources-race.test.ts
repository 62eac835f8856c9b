// A fact's sources against a concurrent delete of their messages on a real server (PGlite has one connection, so
// nothing races there): the add reads its sources in its own transaction, locked until it commits, so whichever of
// the two comes first, no fact is left naming a deleted message (docs/FACTS.md, "Sources"). Each interleaving is
// held in place by a lock another connection takes, and the test waits for the wait, not for a duration.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { PostgresStore } from "../../src/postgres/index.js";
import { factTables } from "../../src/sql/facts/postgres.js";
import { fact } from "../../src/testing/contract/facts-harness.js";
import { msg } from "../../src/testing/contract/harness.js";
import { rejectsWithCode } from "../../src/testing/runner.js";
import {
  backendPid,
  dropSchema,
  postgresUnavailable,
  testClient,
  testPool,
  waitUntilBlockedBy,
} from "../fixtures/postgres-db.js";

const skip = await postgresUnavailable();
const pool = skip ? undefined : testPool(6);
const SCHEMA = `agent_session_test_fact_sources_${process.pid}`;
after(async () => {
  if (!pool) return;
  await dropSchema(pool, SCHEMA);
  await pool.end();
});

const s = { sessionId: "s" };

/** A fresh store with session `s` holding message `m1`, and a connection of its own holding a transaction open. */
async function setUp(): Promise<{
  store: PostgresStore;
  holder: ReturnType<typeof testClient>;
  pid: number;
}> {
  await dropSchema(pool!, SCHEMA);
  const store = await PostgresStore.open(pool!, { schema: SCHEMA });
  await store.session("s").appendMessage(msg("m1", "I moved to Boston"));
  const holder = testClient();
  await holder.connect();
  await holder.query("BEGIN");
  return { store, holder, pid: await backendPid(holder) };
}

test("an add waits for a delete of its source begun first, then refuses the message it no longer finds", {
  skip: skip ?? false,
}, async () => {
  const { store, holder, pid } = await setUp();
  try {
    // The delete, held uncommitted: the add's snapshot still sees m1, and only the lock makes it wait.
    await holder.query(`DELETE FROM ${store.tables.messages} WHERE id = 'm1'`);
    const adding = store.facts.add(s, [fact("Moved to Boston.", [["s", "m1"]])]);
    await waitUntilBlockedBy(pool!, pid);
    await holder.query("COMMIT");
    await rejectsWithCode(adding, "INVALID_ARGUMENT", { path: "facts.0.sources.0.messageId" });
    assert.equal(await store.facts.isEmpty(), true, "no fact names the deleted message");
  } finally {
    await holder.end();
    await store.close();
  }
});

test("a delete of a source begun after the add's read waits for its commit, and the fact goes with it", {
  skip: skip ?? false,
}, async () => {
  const { store, holder, pid } = await setUp();
  try {
    // The add is held after reading its source, at its insert (the facts table locked against writes).
    await holder.query(`LOCK TABLE ${factTables(store.tables).facts} IN SHARE MODE`);
    const adding = store.facts.add(s, [fact("Moved to Boston.", [["s", "m1"]], { id: "boston" })]);
    await waitUntilBlockedBy(pool!, pid);
    // The delete queues behind the add (its source's lock), not beside it.
    const deleting = store.session("s").deleteMessages(["m1"]);
    await waitUntilBlockedBy(pool!, pid, 60_000, 2);
    await holder.query("COMMIT");
    await adding;
    await deleting;
    assert.equal(await store.facts.get(s, "boston"), null, "the fact went with its last source");
    assert.equal(await store.facts.isEmpty(), true);
  } finally {
    await holder.end();
    await store.close();
  }
});
