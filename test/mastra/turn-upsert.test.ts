// A save of a turn into one thread (src/mastra/save.ts): on one Postgres server its messages are appended by one
// statement that checks no session holds their ids, and a turn that mixes new ids with stored ones falls back to
// the look-up. Either way a save writes what the look-up decides: a stored id of the thread replaced in place, one
// of another thread of the resource moved, one of another resource's thread refused with nothing of the turn written,
// one of another door's session left alone. Every backend.
import assert from "node:assert/strict";
import type { MastraDBMessage } from "@mastra/core/memory";
import { AgentSessionMemoryStorage } from "../../src/mastra/index.js";
import { onEveryBackend } from "./backends.js";

const message = (threadId: string, resourceId: string, text: string, minute: number, id: string) =>
  ({
    id,
    threadId,
    resourceId,
    role: minute % 2 === 0 ? "user" : "assistant",
    createdAt: new Date(Date.UTC(2025, 0, 1, 0, minute)),
    content: { format: 2, parts: [{ type: "text", text }] },
  }) as MastraDBMessage;

const texts = (messages: MastraDBMessage[]) =>
  messages.map((m) => (m.content.parts[0] as { text?: string } | undefined)?.text);

await onEveryBackend("Mastra turns of new and stored ids", (it) => {
  it("replaces, moves, refuses and leaves alone as a save of each message would", async ({ store }) => {
    const memory = new AgentSessionMemoryStorage(store);
    const list = async (threadId: string) => texts((await memory.listMessages({ threadId })).messages);
    await memory.saveMessages({
      messages: [message("a", "alice", "first", 0, "x1"), message("a", "alice", "second", 1, "x2")],
    });
    // A stored id of the thread and a new one: the first replaced in place, the second appended.
    await memory.saveMessages({
      messages: [message("a", "alice", "first, edited", 0, "x1"), message("a", "alice", "third", 2, "x3")],
    });
    assert.deepEqual(await list("a"), ["first, edited", "second", "third"]);
    // A stored id of another thread of alice's and a new one: the first moved, both in the other thread.
    await memory.saveMessages({
      messages: [message("b", "alice", "second", 1, "x2"), message("b", "alice", "fourth", 3, "x4")],
    });
    assert.deepEqual(await list("a"), ["first, edited", "third"]);
    assert.deepEqual(await list("b"), ["second", "fourth"]);
    // A stored id of alice's thread saved into bob's, beside a new one: refused, and the new one not written.
    await memory.saveMessages({ messages: [message("c", "bob", "bob's own", 0, "y1")] });
    await assert.rejects(
      memory.saveMessages({
        messages: [message("c", "bob", "stolen", 4, "x3"), message("c", "bob", "beside it", 5, "y2")],
      }),
      { code: "CONFLICT" },
    );
    assert.deepEqual(await list("c"), ["bob's own"]);
    assert.deepEqual(texts((await memory.listMessagesById({ messageIds: ["y2"] })).messages), []);
    assert.deepEqual(await list("a"), ["first, edited", "third"]);
    // An id another door's session holds: the chat's message left alone, the turn appended to the thread.
    await store.registry.create({ id: "chat", name: "chat", owner: "alice", source: null });
    await store
      .session("chat")
      .appendMessage({ id: "z1", role: "user", parts: [{ type: "text", text: "chat" }] });
    await memory.saveMessages({
      messages: [message("a", "alice", "mastra's z1", 6, "z1"), message("a", "alice", "fifth", 7, "x5")],
    });
    assert.deepEqual(await list("a"), ["first, edited", "third", "mastra's z1", "fifth"]);
    assert.deepEqual((await store.session("chat").getMessage("z1"))?.parts, [{ type: "text", text: "chat" }]);
  });
});
