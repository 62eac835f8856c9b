// The statements a warm thread's put and putWrites send to the Postgres server (docs/PERFORMANCE.md, "LangGraph
// checkpointers"): on a short thread the saver's time is its round trips, so their count is held here and cannot
// creep up unseen. Exact counts, not a timing: lower them when a change removes a statement.
import assert from "node:assert/strict";
import { test } from "node:test";
import { HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { inOwnSchema, postgresUnavailable } from "../fixtures/postgres-db.js";
import { counted } from "../helpers/round-trips.js";

// Round trips of the third put and putWrites of a thread (registry row, cached key look-up and recall all warm).
async function warm(
  store: PostgresStore,
  owner: string | undefined,
  saver = new AgentSessionSaver(store, owner ? { ownerKey: "user_id" } : {}),
): Promise<{ put: number; putWrites: number }> {
  const own = owner ? { user_id: owner } : {};
  let config: RunnableConfig = {
    configurable: { thread_id: `t-${owner ?? "none"}`, checkpoint_ns: "", ...own },
  };
  const messages: HumanMessage[] = [];
  let counts = { put: 0, putWrites: 0 };
  for (let i = 0; i < 3; i++) {
    messages.push(new HumanMessage({ id: `m${i}`, content: `message ${i}` }));
    const checkpoint = emptyCheckpoint();
    checkpoint.id = uuid6(-1);
    checkpoint.channel_values = { messages: [...messages] };
    checkpoint.channel_versions = { messages: i + 1 };
    let written: RunnableConfig = {};
    const put = await counted(async () => {
      written = await saver.put(
        config,
        checkpoint,
        { source: "loop", step: i, parents: {} },
        { messages: i + 1 },
      );
    });
    config = { configurable: { ...written.configurable, ...own } };
    const putWrites = await counted(() =>
      saver.putWrites(config, [["messages", [messages[i]]]], `task-${i}`),
    );
    counts = { put, putWrites };
  }
  return counts;
}

const reason = await postgresUnavailable();
if (reason) console.log(`Skipping the LangGraph saver's round trips on Postgres: ${reason}`);
test("Postgres: a warm thread's put and putWrites send the statements they send today", {
  skip: reason ?? false,
}, async () => {
  await inOwnSchema("lg_trips", async (pool, schema) => {
    const store = await PostgresStore.open(pool, { schema });
    // One statement: the value, the checkpoint and the key guard (which checks the thread's owner too: no registry
    // read) as its CTEs; recall's append of the new message. putWrites: one statement.
    assert.deepEqual(await warm(store, undefined), { put: 2, putWrites: 1 });
    // An owner in clear takes the owner's advisory lock before the write, in a transaction with it
    // (sql/checkpoints/postgres-guard.ts): BEGIN, the lock, the write, COMMIT.
    assert.deepEqual(await warm(store, "alice"), { put: 5, putWrites: 4 });
    await store.close();
  });
});

test("Postgres: a thread another process deleted and created again for another owner refuses a saver that knew it", {
  skip: reason ?? false,
}, async () => {
  await inOwnSchema("lg_owner", async (pool, schema) => {
    const store = await PostgresStore.open(pool, { schema });
    const saver = new AgentSessionSaver(store, { ownerKey: "user_id" });
    await warm(store, "alice", saver); // the saver now writes t-alice without reading the registry
    await store.registry.delete("t-alice");
    await store.registry.create({ id: "t-alice", name: "", owner: "bob", source: "langgraph" });
    const checkpoint = emptyCheckpoint();
    checkpoint.id = uuid6(-1);
    const config = { configurable: { thread_id: "t-alice", checkpoint_ns: "", user_id: "alice" } };
    await assert.rejects(saver.put(config, checkpoint, { source: "loop", step: 9, parents: {} }, {}), {
      code: "CONFLICT",
    });
    await assert.rejects(
      saver.putWrites(
        { configurable: { ...config.configurable, checkpoint_id: checkpoint.id } },
        [["x", 1]],
        "t",
      ),
      { code: "CONFLICT" },
    );
    assert.equal((await store.checkpoints.footprint("t-alice")).rows, 0);
    // Deleted and not created again: the saver registers it anew, for its run's owner.
    await store.registry.delete("t-alice");
    await saver.put(config, checkpoint, { source: "loop", step: 9, parents: {} }, {});
    assert.equal((await store.registry.get("t-alice"))?.owner, "alice");
    await store.close();
  });
});
