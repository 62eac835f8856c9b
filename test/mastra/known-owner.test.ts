// A save remembers each thread's owner and does not read the registry for it again (src/mastra/save.ts): every
// write checks the owner inside its own transaction instead. Here the thread changes under a storage that knows it —
// deleted and registered again for another resource, or as another door's session, or erased — and the save is
// refused or registers the thread anew, never writing into what is no longer its resource's thread. Every backend.
import assert from "node:assert/strict";
import type { MastraDBMessage } from "@mastra/core/memory";
import { AgentSessionMemoryStorage } from "../../src/mastra/index.js";
import { onEveryBackend } from "./backends.js";

const message = (threadId: string, resourceId: string, text: string, second: number) =>
  ({
    id: `${text}-${second}`,
    threadId,
    resourceId,
    role: "user",
    createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, second)),
    content: { format: 2, parts: [{ type: "text", text }] },
  }) as MastraDBMessage;

await onEveryBackend("Mastra known owners", (it) => {
  it("refuses another resource's or another door's session, and registers an erased thread again", async ({
    store,
  }) => {
    const memory = new AgentSessionMemoryStorage(store);
    await memory.saveMessages({ messages: [message("t1", "alice", "first", 0)] });
    // Registered again, for bob, by someone else (another process, or the registry directly).
    await store.registry.delete("t1");
    await store.registry.create({ id: "t1", name: "", owner: "bob", source: "mastra" });
    await assert.rejects(memory.saveMessages({ messages: [message("t1", "alice", "second", 1)] }), {
      code: "CONFLICT",
    });
    assert.equal(
      (await memory.listMessages({ threadId: "t1" })).messages.length,
      0,
      "nothing in bob's thread",
    );
    // Another door's session of alice under the same id.
    await store.registry.delete("t1");
    await store.registry.create({ id: "t1", name: "", owner: "alice", source: "chat" });
    await assert.rejects(memory.saveMessages({ messages: [message("t1", "alice", "third", 2)] }), {
      code: "CONFLICT",
    });
    assert.equal((await store.session("t1").getHistory()).length, 0, "nothing in the chat's session");
    // Erased: the next save registers it for its resource again.
    await store.registry.delete("t1");
    await memory.saveMessages({ messages: [message("t1", "alice", "fourth", 3)] });
    assert.equal((await store.registry.get("t1"))?.owner, "alice");
    const listed = await memory.listMessages({ threadId: "t1", resourceId: "alice" });
    assert.deepEqual(
      listed.messages.map((m) => (m.content.parts[0] as { text: string }).text),
      ["fourth"],
    );
  });
});
