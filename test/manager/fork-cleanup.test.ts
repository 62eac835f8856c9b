// A fork whose copy fails removes its partial session; when that removal fails too, the copy's error is still the
// answer and the removal's failure is a process warning, never dropped.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SessionManager } from "../../src/manager/manager.js";
import { MemoryStore } from "../../src/memory/store.js";
import { msg } from "../../src/testing/contract/harness.js";

test("a failed fork whose clean-up fails reports the clean-up as AgentSessionManagerWarning", async () => {
  const store = new MemoryStore();
  const manager = SessionManager.create(store);
  const source = await manager.create("source");
  await manager.append(source.id, msg("m1", "hello"));

  // The copy into the new session fails, and so does removing that session again.
  store.writeStep = async () => {
    throw new Error("copy failed");
  };
  store.registry.delete = async () => {
    throw new Error("removal failed");
  };
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on("warning", onWarning);
  try {
    await assert.rejects(manager.fork(source.id, "m1", "copy"), /copy failed/);
    await new Promise((resolve) => setImmediate(resolve)); // warnings are delivered on the next tick
  } finally {
    process.off("warning", onWarning);
  }
  const warning = warnings.find((w) => w.name === "AgentSessionManagerWarning");
  assert.ok(warning, "the failed clean-up is reported");
  assert.match(warning.message, /was left registered: removal failed/);
  assert.equal((warning.cause as Error).message, "removal failed");
});
