// An adapter built without a session id takes a new random one (as the SDK's MemorySession does): two such
// adapters on one store must never read or write the same conversation.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AgentInputItem } from "@openai/agents-core";
import { SqliteStore } from "../../src/index.js";
import { OpenAIAgentsSession } from "../../src/openai-agents/index.js";

const said = (text: string): AgentInputItem => ({ role: "user", content: text }) as AgentInputItem;

test("adapters built without a session id each get their own conversation", async () => {
  const store = new SqliteStore(":memory:");
  const alice = new OpenAIAgentsSession(store);
  const bob = new OpenAIAgentsSession(store);
  const [aliceId, bobId] = [await alice.getSessionId(), await bob.getSessionId()];
  assert.notEqual(aliceId, "", "not the unnamed default session");
  assert.notEqual(aliceId, bobId);
  await alice.addItems([said("my card ends in 4242")]);
  assert.deepEqual(await bob.getItems(), [], "bob does not read alice's history");
  assert.equal((await alice.getItems()).length, 1);
  // The id read back continues the same conversation.
  assert.equal((await new OpenAIAgentsSession(store, aliceId).getItems()).length, 1);
  // An explicit "" still names the default session.
  assert.equal(await new OpenAIAgentsSession(store, "").getSessionId(), "");
  await store.close();
});
