// `agent-session prune` erases a session's blocks by the store's record of whose they are (issue #75): the blocks
// recorded for the pruned session go whatever their label, and an owner's `profile_bob`, or an unrecorded row,
// stays though its key ends with the pruned session's id.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { SessionManager } from "../../src/manager/manager.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { runCli, tempDir } from "./helpers.js";

const tmp = tempDir();
after(() => tmp.remove());

test("prune --owner alice erases her session bob's recorded blocks, not bob's owner block nor unrecorded ones", async () => {
  const db = tmp.path("records.db");
  const store = new SqliteStore(db);
  const manager = new SessionManager(store);
  await (await manager.forOwner("alice").open("bob")).appendMessage({
    id: "m1",
    role: "user",
    parts: [{ type: "text", text: "Alice's chat, named bob by her client" }],
  });
  await store.blocks.setBlock("plan_bob", "Alice's plan, written over MCP", { sessionId: "bob" });
  await store.blocks.setBlock("profile_bob", "Bob's profile", { owner: "bob" });
  await store.blocks.setBlock("settings_bob", "an app's unrecorded row");
  store.driver.run("UPDATE agent_sessions SET updated_at = '2020-01-01T00:00:00.000Z' WHERE id = 'bob'");
  await store.close();

  const pruned = await runCli(["prune", "--older-than", "30d", "--owner", "alice", "--db", db]);
  assert.equal(pruned.code, 0, pruned.stderr);
  const after = new SqliteStore(db);
  try {
    assert.equal(await after.registry.get("bob"), null);
    assert.equal(await after.blocks.getBlock("plan_bob"), null);
    assert.equal(await after.blocks.getBlock("profile_bob"), "Bob's profile");
    assert.equal(await after.blocks.getBlock("settings_bob"), "an app's unrecorded row");
  } finally {
    await after.close();
  }
});
