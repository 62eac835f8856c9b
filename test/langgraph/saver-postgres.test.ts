// The LangGraph checkpointer on the Postgres server and PGlite, for a thread of an owner without a key: its
// checkpoint and pending writes take the session's guard as a statement of their own (postgres/key-guard.ts
// writeGuardPasses), which on one server is the owner's lock and a read, not the coordinator's function of a cluster
// (which a single server does not have: every such write failed STORAGE before).
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import type { RunnableConfig } from "@langchain/core/runnables";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";

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
  const db = await PGlite.create();
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
  const pool = testPool(2);
  after(() => pool.end());
  const schema = `agent_session_saver_${process.pid}`;
  await dropSchema(pool, schema);
  try {
    const store = await PostgresStore.open(pool, { schema });
    await ownedThread(store);
    await store.close();
  } finally {
    await dropSchema(pool, schema);
  }
});
