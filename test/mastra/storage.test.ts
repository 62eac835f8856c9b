// Mastra's memory domain on our stores (docs/MASTRA.md): the behaviours Mastra's memory-domain store tests check,
// written again here (threads, messages, include windows, date ranges, pages, order, upsert and moves, updates,
// deletes, resources, clones), and the owner boundary. Every backend; skipped with the reason below Node 22.13.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { MastraDBMessage } from "@mastra/core/memory";
import { AgentSessionMemoryStorage } from "../../src/mastra/index.js";
import { onEveryBackend } from "./backends.js";

const T0 = Date.parse("2025-01-01T00:00:00.000Z");
const at = (minute: number) => new Date(T0 + minute * 60_000);

/** A Mastra message of `threadId` at minute `minute`. */
export function message(
  threadId: string,
  resourceId: string,
  text: string,
  minute: number,
  id: string = randomUUID(),
) {
  return {
    id,
    threadId,
    resourceId,
    role: minute % 2 === 0 ? "user" : "assistant",
    createdAt: at(minute),
    content: { format: 2, parts: [{ type: "text", text }], content: text },
  } as MastraDBMessage;
}

const thread = (id: string, resourceId: string, extra: Record<string, unknown> = {}) => ({
  id,
  resourceId,
  title: `title of ${id}`,
  metadata: { kind: "chat", ...extra },
  createdAt: new Date(),
  updatedAt: new Date(),
});

const texts = (messages: MastraDBMessage[]) =>
  messages.map((m) => (m.content.parts[0] as { text?: string } | undefined)?.text);

await onEveryBackend("Mastra MemoryStorage", (it) => {
  it("saves, reads, updates (metadata merged) and deletes threads", async ({ store }) => {
    const memory = new AgentSessionMemoryStorage(store);
    const saved = await memory.saveThread({ thread: thread("t1", "alice") });
    assert.equal(saved.id, "t1");
    const read = await memory.getThreadById({ threadId: "t1" });
    assert.equal(read?.title, "title of t1");
    assert.equal(read?.resourceId, "alice");
    assert.deepEqual(read?.metadata, { kind: "chat" });
    assert.equal(await memory.getThreadById({ threadId: "t1", resourceId: "bob" }), null);
    assert.equal(await memory.getThreadById({ threadId: "nope" }), null);
    const updated = await memory.updateThread({ id: "t1", title: "new", metadata: { extra: 1 } });
    assert.equal(updated.title, "new");
    assert.deepEqual(updated.metadata, { kind: "chat", extra: 1 });
    const partial = await memory.updateThread({ id: "t1", metadata: { more: true } });
    assert.equal(partial.title, "new", "an omitted title is left");
    await assert.rejects(memory.updateThread({ id: "nope", title: "x" }));
    await memory.saveMessages({ messages: [message("t1", "alice", "hello", 0)] });
    await memory.deleteThread({ threadId: "t1" });
    assert.equal(await memory.getThreadById({ threadId: "t1" }), null);
    assert.equal((await memory.listMessages({ threadId: "t1" })).messages.length, 0);
  });

  it("lists a resource's threads by metadata, in pages and order", async ({ store }) => {
    const memory = new AgentSessionMemoryStorage(store);
    for (let i = 0; i < 5; i++) {
      const t = thread(`r${i}`, "alice", { n: i % 2 });
      t.createdAt = at(i);
      t.updatedAt = at(i);
      await memory.saveThread({ thread: t });
    }
    await memory.saveThread({ thread: thread("other", "bob") });
    const first = await memory.listThreads({
      filter: { resourceId: "alice" },
      perPage: 2,
      page: 0,
      orderBy: { field: "createdAt", direction: "ASC" },
    });
    assert.deepEqual(
      first.threads.map((t) => t.id),
      ["r0", "r1"],
    );
    assert.equal(first.total, 5);
    assert.equal(first.hasMore, true);
    const last = await memory.listThreads({ filter: { resourceId: "alice" }, perPage: 2, page: 2 });
    assert.equal(last.threads.length, 1);
    assert.equal(last.hasMore, false);
    const byMeta = await memory.listThreads({ filter: { resourceId: "alice", metadata: { n: 1 } } });
    assert.deepEqual(byMeta.threads.map((t) => t.id).sort(), ["r1", "r3"]);
    const all = await memory.listThreads({ perPage: false });
    assert.equal(all.total, 6);
    await assert.rejects(memory.listThreads({ filter: { metadata: { "bad key": 1 } } }));
  });

  it("lists messages by the caller's time: pages, order, date ranges, include windows", async ({ store }) => {
    const memory = new AgentSessionMemoryStorage(store);
    await memory.saveThread({ thread: thread("m", "alice") });
    // Saved out of time order: the list is by createdAt, not by when they were saved.
    const minutes = [3, 0, 4, 1, 2, 7, 5, 6, 9, 8];
    const saved = minutes.map((minute) => message("m", "alice", `text ${minute}`, minute, `m${minute}`));
    await memory.saveMessages({ messages: saved });
    const all = await memory.listMessages({ threadId: "m", perPage: false });
    assert.deepEqual(
      texts(all.messages),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `text ${n}`),
    );
    assert.equal(all.total, 10);
    assert.equal(all.hasMore, false);
    const last = await memory.listMessages({
      threadId: "m",
      perPage: 3,
      page: 0,
      orderBy: { field: "createdAt", direction: "DESC" },
    });
    assert.deepEqual(texts(last.messages), ["text 9", "text 8", "text 7"]);
    assert.equal(last.hasMore, true);
    const page2 = await memory.listMessages({ threadId: "m", perPage: 4, page: 2 });
    assert.deepEqual(texts(page2.messages), ["text 8", "text 9"]);
    const ranged = await memory.listMessages({
      threadId: "m",
      filter: { dateRange: { start: at(2), end: at(5), endExclusive: true } },
    });
    assert.deepEqual(texts(ranged.messages), ["text 2", "text 3", "text 4"]);
    assert.equal(ranged.total, 3);
    const window = await memory.listMessages({
      threadId: "m",
      perPage: 0,
      include: [{ id: "m5", withPreviousMessages: 2, withNextMessages: 1 }],
    });
    assert.deepEqual(texts(window.messages), ["text 3", "text 4", "text 5", "text 6"]);
    const withPage = await memory.listMessages({
      threadId: "m",
      perPage: 1,
      orderBy: { field: "createdAt", direction: "DESC" },
      include: [{ id: "m0", withNextMessages: 1 }],
    });
    assert.deepEqual(texts(withPage.messages), ["text 9", "text 1", "text 0"]);
    const byId = await memory.listMessagesById({ messageIds: ["m1", "m7", "missing"] });
    assert.deepEqual(texts(byId.messages), ["text 1", "text 7"]);
    await assert.rejects(memory.listMessages({ threadId: "" }));
    await assert.rejects(memory.listMessages({ threadId: "m", page: -1 }));
    await assert.rejects(memory.listMessages({ threadId: "m", filter: { metadata: { a: 1 } } }), {
      code: "UNSUPPORTED",
    });
    assert.equal((await memory.listMessages({ threadId: "m", resourceId: "bob" })).messages.length, 0);
  });

  it("upserts messages, moves one to another thread, merges updates, deletes", async ({ store }) => {
    const memory = new AgentSessionMemoryStorage(store);
    await memory.saveThread({ thread: thread("a", "alice") });
    await memory.saveThread({ thread: thread("b", "alice") });
    const one = message("a", "alice", "first", 0, "x1");
    const two = message("a", "alice", "second", 1, "x2");
    await memory.saveMessages({ messages: [one, two] });
    await memory.saveMessages({
      messages: [{ ...one, content: { ...one.content, parts: [{ type: "text", text: "first, edited" }] } }],
    });
    assert.deepEqual(texts((await memory.listMessages({ threadId: "a" })).messages), [
      "first, edited",
      "second",
    ]);
    await memory.saveMessages({ messages: [{ ...two, threadId: "b" }] });
    assert.deepEqual(texts((await memory.listMessages({ threadId: "a" })).messages), ["first, edited"]);
    assert.deepEqual(texts((await memory.listMessages({ threadId: "b" })).messages), ["second"]);
    const [updated] = await memory.updateMessages({
      messages: [{ id: "x1", content: { metadata: { deep: { a: 1 } } } as never }],
    });
    assert.deepEqual(updated?.content.metadata, { deep: { a: 1 } });
    await memory.updateMessages({
      messages: [{ id: "x1", content: { metadata: { deep: { b: 2 } } } as never }],
    });
    const [read] = (await memory.listMessagesById({ messageIds: ["x1"] })).messages;
    assert.deepEqual(read?.content.metadata, { deep: { a: 1, b: 2 } }, "metadata merged deeply");
    assert.equal(read?.threadId, "a");
    await memory.updateMessages({ messages: [{ id: "x1", threadId: "b" }] });
    assert.equal((await memory.listMessages({ threadId: "a" })).messages.length, 0);
    assert.equal((await memory.listMessages({ threadId: "b" })).total, 2);
    await memory.deleteMessages(["x1"]);
    assert.deepEqual(texts((await memory.listMessages({ threadId: "b" })).messages), ["second"]);
  });

  it("refuses a message into, or out of, another resource's thread", async ({ store }) => {
    const memory = new AgentSessionMemoryStorage(store);
    await memory.saveThread({ thread: thread("alices", "alice") });
    await memory.saveThread({ thread: thread("bobs", "bob") });
    await assert.rejects(memory.saveMessages({ messages: [message("alices", "bob", "intrusion", 0)] }), {
      code: "CONFLICT",
    });
    await memory.saveMessages({ messages: [message("alices", "alice", "private", 0, "p1")] });
    await assert.rejects(memory.saveMessages({ messages: [message("bobs", "bob", "stolen", 0, "p1")] }), {
      code: "CONFLICT",
    });
    await assert.rejects(memory.updateMessages({ messages: [{ id: "p1", threadId: "bobs" }] }), {
      code: "CONFLICT",
    });
    await assert.rejects(memory.saveThread({ thread: thread("alices", "bob") }), { code: "CONFLICT" });
    assert.equal((await memory.listMessages({ threadId: "bobs" })).messages.length, 0);
    const bobs = await memory.listMessages({
      threadId: "bobs",
      include: [{ id: "p1", withPreviousMessages: 1 }],
    });
    assert.equal(bobs.messages.length, 0, "an include of another owner's message reads nothing");
  });

  it("never reaches another door's session, whatever ids the two share", async ({ store }) => {
    const memory = new AgentSessionMemoryStorage(store);
    // A chat of alice's, in the same store, with the message ids Mastra will use too.
    await store.registry.create({ id: "chat", name: "chat", owner: "alice", source: null });
    const chat = store.session("chat");
    await chat.appendMessage({
      id: "shared",
      role: "user",
      parts: [{ type: "text", text: "the chat's own" }],
    });
    await assert.rejects(memory.saveMessages({ messages: [message("chat", "alice", "into the chat", 0)] }), {
      code: "CONFLICT",
    });
    assert.equal(await memory.getThreadById({ threadId: "chat" }), null);
    await memory.saveThread({ thread: thread("t", "alice") });
    await memory.saveMessages({ messages: [message("t", "alice", "mastra's own", 0, "shared")] });
    const byId = await memory.listMessagesById({ messageIds: ["shared"] });
    assert.deepEqual(texts(byId.messages), ["mastra's own"]);
    await memory.updateMessages({ messages: [{ id: "shared", content: { metadata: { x: 1 } } as never }] });
    await memory.deleteMessages(["shared"]);
    assert.equal((await memory.listMessages({ threadId: "t" })).messages.length, 0);
    const kept = await chat.getMessage("shared");
    assert.deepEqual(kept?.parts, [{ type: "text", text: "the chat's own" }]);
    assert.equal(kept?.metadata, undefined, "Mastra's update did not reach the chat's message");
  });

  it("keeps resources and working memory, merging metadata", async ({ store }) => {
    const memory = new AgentSessionMemoryStorage(store);
    assert.equal(await memory.getResourceById({ resourceId: "alice" }), null);
    const created = await memory.updateResource({ resourceId: "alice", workingMemory: "# name: Alice" });
    assert.equal(created.workingMemory, "# name: Alice");
    await memory.updateResource({ resourceId: "alice", metadata: { a: 1 } });
    await memory.updateResource({ resourceId: "alice", metadata: { b: 2 } });
    const read = await memory.getResourceById({ resourceId: "alice" });
    assert.equal(read?.workingMemory, "# name: Alice");
    assert.deepEqual(read?.metadata, { a: 1, b: 2 });
    await memory.saveResource({
      resource: {
        id: "bob",
        workingMemory: "wm",
        metadata: {},
        createdAt: new Date(),
        updatedAt: new Date(),
      },
    });
    assert.equal((await memory.getResourceById({ resourceId: "bob" }))?.workingMemory, "wm");
  });

  it("clones a thread: its messages, a limit, the clone's metadata", async ({ store }) => {
    const memory = new AgentSessionMemoryStorage(store);
    await memory.saveThread({ thread: thread("src", "alice") });
    await memory.saveMessages({
      messages: [0, 1, 2, 3].map((n) => message("src", "alice", `c${n}`, n, `c${n}`)),
    });
    const { thread: clone, clonedMessages } = await memory.cloneThread({
      sourceThreadId: "src",
      newThreadId: "dst",
    });
    assert.equal(clone.id, "dst");
    assert.equal(clone.title, "Clone of title of src");
    assert.equal((clone.metadata as { clone?: { sourceThreadId?: string } }).clone?.sourceThreadId, "src");
    assert.deepEqual(texts(clonedMessages), ["c0", "c1", "c2", "c3"]);
    assert.ok(clonedMessages.every((m) => m.threadId === "dst" && !/^c\d$/.test(m.id)));
    const limited = await memory.cloneThread({ sourceThreadId: "src", options: { messageLimit: 2 } });
    assert.deepEqual(texts(limited.clonedMessages), ["c2", "c3"]);
    await assert.rejects(memory.cloneThread({ sourceThreadId: "src", newThreadId: "dst" }));
    await assert.rejects(memory.cloneThread({ sourceThreadId: "missing" }));
  });
  it("bumps a thread's updatedAt on a message, keeps stringified content, special titles, concurrent updates", async ({
    store,
  }) => {
    const memory = new AgentSessionMemoryStorage(store);
    const t = thread("edge", "alice");
    t.title = `Special 'quotes' and "double quotes" and emoji 🎉`;
    t.createdAt = at(0);
    t.updatedAt = at(0);
    await memory.saveThread({ thread: t });
    const before = (await memory.getThreadById({ threadId: "edge" }))?.updatedAt.getTime() ?? 0;
    assert.equal((await memory.getThreadById({ threadId: "edge" }))?.title, t.title);
    const json = JSON.stringify({ userInput: "test data", metadata: { key: "value" } });
    await new Promise((resolve) => setTimeout(resolve, 5)); // a later millisecond than the thread's save
    const m = message("edge", "alice", json, 1);
    await memory.saveMessages({ messages: [m] });
    assert.ok(((await memory.getThreadById({ threadId: "edge" }))?.updatedAt.getTime() ?? 0) > before);
    const [read] = (await memory.listMessages({ threadId: "edge" })).messages;
    assert.equal(read?.content.format, 2);
    assert.equal(read?.content.content, json, "content.content kept as given, not nested");
    assert.deepEqual(read?.content.parts, [{ type: "text", text: json }]);
    const updates = Array.from({ length: 5 }, (_, i) =>
      memory.updateThread({ id: "edge", title: `Update ${i}`, metadata: { update: i } }),
    );
    await Promise.all(updates);
    assert.match((await memory.getThreadById({ threadId: "edge" }))?.title ?? "", /^Update \d$/);
    // A message with only text content (no parts) reads back with its text as its part and its content.
    const plain = {
      ...message("edge", "alice", "", 2),
      content: { format: 2, parts: [], content: "just text" },
    };
    await memory.saveMessages({ messages: [plain as MastraDBMessage] });
    const [back] = (await memory.listMessagesById({ messageIds: [plain.id] })).messages;
    assert.equal(back?.content.content, "just text");
  });
});
