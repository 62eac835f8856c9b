// Owners with the OpenAI Agents adapter: the conversation opened through `manager.forOwner(user).open(id)` is
// registered as the user's, and another user cannot open it.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AgentInputItem } from "@openai/agents-core";
import { SessionManager, SqliteStore } from "../../src/index.js";
import { OpenAIAgentsSession } from "../../src/openai-agents/index.js";

test("an OpenAIAgentsSession over an owner's open() is the owner's; another owner's is NOT_FOUND", async () => {
  const manager = new SessionManager(new SqliteStore(":memory:"));
  const alice = new OpenAIAgentsSession(await manager.forOwner("alice").open("conv-1"));
  const item: AgentInputItem = { role: "user", content: "remember blue" };
  await alice.addItems([item]);
  assert.equal((await manager.get("conv-1"))?.owner, "alice");
  const again = new OpenAIAgentsSession(await manager.forOwner("alice").open("conv-1"));
  assert.equal((await again.getItems()).length, 1);
  await assert.rejects(manager.forOwner("bob").open("conv-1"), { code: "NOT_FOUND" });
  assert.deepEqual(await manager.forOwner("bob").list(), []);
  await manager.close();
});
