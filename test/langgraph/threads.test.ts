// A saver that knows a thread's owner writes without reading the registry (src/langgraph/threads.ts) on SQLite too:
// the write's transaction reads the owner itself, so a thread deleted, or registered again for another owner, by
// another saver is refused there with nothing written, and the saver reads the registry again.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunnableConfig } from "@langchain/core/runnables";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";

const meta = { source: "loop" as const, step: 0, parents: {} };
const config: RunnableConfig = { configurable: { thread_id: "t", checkpoint_ns: "", user_id: "alice" } };

async function put(saver: AgentSessionSaver): Promise<RunnableConfig> {
  const checkpoint = emptyCheckpoint();
  checkpoint.id = uuid6(-1);
  return saver.put(config, checkpoint, meta, {});
}

test("SQLite: a thread registered again for another owner refuses the saver that knew it", async () => {
  const store = new SqliteStore(":memory:");
  try {
    const saver = new AgentSessionSaver(store, { ownerKey: "user_id" });
    assert.equal(store.checkpoints.checksOwner, true);
    const written = await put(saver);
    await put(saver); // the owner known: no registry read
    await store.registry.delete("t");
    await store.registry.create({ id: "t", name: "", owner: "bob", source: "langgraph" });
    await assert.rejects(put(saver), { code: "CONFLICT" });
    await assert.rejects(
      saver.putWrites({ configurable: { ...written.configurable, user_id: "alice" } }, [["x", 1]], "task"),
      { code: "CONFLICT" },
    );
    assert.equal((await store.checkpoints.footprint("t")).rows, 0);
    // Deleted and left so: the saver registers it again for its run's owner.
    await store.registry.delete("t");
    await put(saver);
    assert.equal((await store.registry.get("t"))?.owner, "alice");
    assert.equal((await store.checkpoints.footprint("t")).rows, 1);
  } finally {
    await store.close();
  }
});
