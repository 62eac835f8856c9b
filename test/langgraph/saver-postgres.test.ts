// The LangGraph checkpointer on the Postgres server and PGlite, for a thread of an owner without a key: its
// checkpoint and pending writes take the owner's lock and then the session's guard inside their one statement
// (sql/checkpoints/postgres-guard.ts), not the coordinator's function of a cluster (which a single server does not have:
// every such write failed STORAGE before); and a put whose delta lost its base goes again in full.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunnableConfig } from "@langchain/core/runnables";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { newPGlite } from "../fixtures/pglite.js";
import { inOwnSchema, pgliteSwitchedOff, postgresUnavailable } from "../fixtures/postgres-db.js";

const meta = { source: "loop" as const, step: 0, parents: {} };
const config: RunnableConfig = { configurable: { thread_id: "t-alice", user_id: "alice" } };

// A checkpoint and a pending write of alice's thread, read back through the saver.
async function ownedThread(store: PostgresStore): Promise<void> {
  const saver = new AgentSessionSaver(store, { ownerKey: "user_id" });
  const checkpoint = emptyCheckpoint();
  checkpoint.id = uuid6(-1);
  checkpoint.channel_values = { messages: ["hi"] };
  checkpoint.channel_versions = { messages: 1 };
  const written = await saver.put(config, checkpoint, meta, { messages: 1 });
  await saver.putWrites(
    { configurable: { ...written.configurable, user_id: "alice" } },
    [["messages", "more"]],
    "t",
  );
  const tuple = await saver.getTuple(config);
  assert.equal((await store.registry.get("t-alice"))?.owner, "alice");
  assert.deepEqual(tuple?.checkpoint.channel_values, { messages: ["hi"] });
  assert.deepEqual(
    tuple?.pendingWrites?.map(([, channel, value]) => [channel, value]),
    [["messages", "more"]],
  );
}

test("PGlite: an owner's thread in clear takes its checkpoints and pending writes", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  try {
    const store = await PostgresStore.open(db, { schema: "saver" });
    await ownedThread(store);
    await store.close();
  } finally {
    await db.close();
  }
});

const reason = await postgresUnavailable();
if (reason) console.log(`Skipping the LangGraph saver on Postgres: ${reason}`);
test("Postgres: an owner's thread in clear takes its checkpoints and pending writes", {
  skip: reason ?? false,
}, async () => {
  await inOwnSchema("saver", async (pool, schema) => {
    const store = await PostgresStore.open(pool, { schema });
    await ownedThread(store);
    await store.close();
  });
});

// A put is one statement on one server (sql/checkpoints/postgres-single.ts): a delta whose base another process
// deleted writes nothing, and the put goes again with the value full; a fresh saver reads it back exactly.
test("Postgres: a delta whose base another process deleted goes in full, in the one-statement put", {
  skip: reason ?? false,
}, async () => {
  await inOwnSchema("saver_lost", async (pool, schema) => {
    const store = await PostgresStore.open(pool, { schema });
    const writer = new AgentSessionSaver(store);
    const other = new AgentSessionSaver(store);
    const thread: RunnableConfig = { configurable: { thread_id: "t-lost", checkpoint_ns: "" } };
    const long = (n: number) => Array.from({ length: n }, (_, i) => `message ${i} `.repeat(8));
    const put = async (config: RunnableConfig, messages: string[], version: number) => {
      const checkpoint = emptyCheckpoint();
      checkpoint.id = uuid6(-1);
      checkpoint.channel_values = { messages };
      checkpoint.channel_versions = { messages: version };
      return writer.put(config, checkpoint, meta, { messages: version });
    };
    await put(await put(thread, long(3), 1), long(4), 2); // the writer now deltas against version 2
    await other.deleteThread("t-lost");
    await put(thread, long(5), 3);
    const { rows } = await pool.query(
      `SELECT version, base FROM "${schema}".agent_checkpoint_values WHERE session_id = 't-lost'`,
    );
    assert.deepEqual(rows, [{ version: "3", base: null }]);
    assert.deepEqual((await other.getTuple(thread))?.checkpoint.channel_values, { messages: long(5) });
    await store.close();
  });
});
