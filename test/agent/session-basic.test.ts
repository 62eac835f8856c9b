import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  createSession,
  MemorySessionStorage,
  type SessionState,
  type SessionStorage,
} from "../../src/agent/index.js";
import { promptOf, scriptedModel } from "./helpers/mock-model.js";
import { collect, stopOf, textOf, turn } from "./helpers/session.js";

/** `inner` with its own `appendMessages` replaced: to fail or hold a write at a chosen moment. */
function withAppend(
  inner: MemorySessionStorage,
  appendMessages: NonNullable<SessionStorage["appendMessages"]>,
): SessionStorage {
  return {
    save: (state) => inner.save(state),
    load: (id) => inner.load(id),
    delete: (id) => inner.delete(id),
    list: () => inner.list(),
    appendMessages,
  };
}

describe("agent session: a plain conversation", () => {
  it("streams text deltas, then the stored assistant message, the step and a stop with usage", async () => {
    const storage = new MemorySessionStorage();
    const model = scriptedModel([{ text: "Hello there, friend.", usage: { input: 12, output: 4 } }]);
    const session = await createSession({ model, sessionStorage: storage, systemPrompt: "Be brief." });
    const events = await turn(session, "Hi!");
    assert.equal(textOf(events), "Hello there, friend.");
    assert.ok(events.filter((e) => e.type === "text").length > 1, "text arrives as several deltas");
    const types = events.map((e) => e.type).filter((type) => type !== "text");
    assert.deepEqual(types, ["message", "step", "stop"]);
    const stop = stopOf(events);
    assert.equal(stop.reason, "completed");
    assert.equal(stop.finishReason, "stop");
    assert.equal(stop.turn, 1);
    assert.equal(stop.usage.inputTokens, 12);
    assert.equal(stop.totalUsage.outputTokens, 4);
    assert.equal(model.doStreamCalls[0]?.prompt[0]?.role, "system");
    const messages = session.getMessages();
    assert.deepEqual(
      messages.map((m) => m.role),
      ["user", "assistant"],
    );
    assert.deepEqual(messages[1]?.content, [{ type: "text", text: "Hello there, friend." }]);
    assert.deepEqual((await storage.load(session.id))?.messages, messages, "memory and storage agree");
    await session.close();
  });

  it("stores the user message before the model is called", async () => {
    const storage = new MemorySessionStorage();
    const model = scriptedModel([{ text: "ok" }]);
    let storedAtCall: SessionState | undefined;
    const session = await createSession({ model, sessionStorage: storage });
    model.onCall = async () => {
      storedAtCall = await storage.load(session.id);
    };
    await turn(session, "remember this");
    assert.deepEqual(
      storedAtCall?.messages.map((m) => [m.role, m.content]),
      [["user", "remember this"]],
    );
    const status = (state: SessionState | undefined) =>
      (state?.metadata["agent.turn"] as { status?: string })?.status;
    assert.equal(status(storedAtCall), "running");
    assert.equal(status(await storage.load(session.id)), "done");
  });

  it("keeps the whole conversation across turns and sends it to the model", async () => {
    const model = scriptedModel([{ text: "First answer." }, { text: "Second answer." }]);
    const session = await createSession({ model });
    await turn(session, "one");
    await turn(session, "two");
    assert.deepEqual(promptOf(model, 1), [
      { role: "user", text: "one" },
      { role: "assistant", text: "First answer." },
      { role: "user", text: "two" },
    ]);
    assert.equal(session.getUsage().steps, 2);
  });

  it("refuses a send while a turn is running, with a clear error", async () => {
    const model = scriptedModel([{ hang: true }, { text: "after" }]);
    const session = await createSession({ model });
    await session.send("first");
    assert.equal(session.running, true);
    await assert.rejects(session.send("second"), { code: "CONFLICT" });
    session.interrupt();
    assert.equal(stopOf(await collect(session)).reason, "interrupted");
    assert.equal(session.running, false);
    assert.equal(stopOf(await turn(session, "third")).reason, "completed");
  });

  it("records per-step usage with cache tokens and cost, and derives the totals", async () => {
    const model = scriptedModel([
      { text: "a", usage: { input: 1000, output: 100, cacheRead: 600, cacheWrite: 200 } },
      { text: "b", usage: { input: 2000, output: 50, cacheRead: 1500 } },
    ]);
    const session = await createSession({
      model,
      pricing: {
        inputPerMillion: 3,
        outputPerMillion: 15,
        cacheReadPerMillion: 0.3,
        cacheWritePerMillion: 3.75,
      },
    });
    await turn(session, "x");
    await turn(session, "y");
    const usage = session.getUsage();
    assert.equal(usage.entries.length, 2);
    const [first] = usage.entries;
    assert.equal(first?.cacheReadTokens, 600);
    assert.equal(first?.cacheWriteTokens, 200);
    assert.equal(first?.model, "mock:scripted");
    // 200 uncached × $3 + 600 × $0.30 + 200 × $3.75 + 100 × $15, per million
    assert.ok(Math.abs((first?.costUsd ?? 0) - (600 + 180 + 750 + 1500) / 1e6) < 1e-12);
    assert.equal(usage.inputTokens, 3000);
    assert.equal(usage.cacheReadTokens, 2100);
    assert.equal(usage.totalTokens, 3150);
    assert.ok(
      Math.abs((usage.costUsd ?? 0) - usage.entries.reduce((sum, e) => sum + (e.costUsd ?? 0), 0)) < 1e-12,
    );
  });

  it("turns a model error into error and stop events, closes the turn, and the next turn works", async () => {
    const model = scriptedModel([{ text: "partial", error: "overloaded" }, { text: "recovered" }]);
    const session = await createSession({ model, modelSettings: { maxRetries: 0 } });
    const events = await turn(session, "hi");
    const error = events.find((e) => e.type === "error");
    assert.match(error?.type === "error" ? error.message : "", /overloaded/);
    assert.equal(stopOf(events).reason, "error");
    const last = session.getMessages().at(-1);
    assert.equal(last?.metadata?.interrupted, true);
    assert.equal(last?.role, "assistant");
    assert.equal(stopOf(await turn(session, "again")).reason, "completed");
    assert.deepEqual(
      promptOf(model, 1).map((m) => m.role),
      ["user", "assistant", "user"],
    );
  });

  it("persists through save() when a user storage has only the four seed methods", async () => {
    const inner = new MemorySessionStorage();
    let saves = 0;
    const storage: SessionStorage = {
      save: (state) => {
        saves++;
        return inner.save(state);
      },
      load: (id) => inner.load(id),
      delete: (id) => inner.delete(id),
      list: () => inner.list(),
    };
    const model = scriptedModel([{ text: "stored anyway" }]);
    const session = await createSession({ model, sessionStorage: storage });
    await turn(session, "hello");
    assert.ok(saves >= 3, `creation, user message, step and turn end are saved (got ${saves})`);
    const state = await storage.load(session.id);
    assert.deepEqual(state?.messages, session.getMessages());
    assert.equal(state?.usage.steps, 1);
  });

  it("refuses bad input with INVALID_MESSAGE and sends after close() with CLOSED", async () => {
    const session = await createSession({ model: scriptedModel([]) });
    for (const bad of ["  ", { role: "assistant", content: "x" }, { role: "user" }, 42]) {
      await assert.rejects(session.send(bad as never), { code: "INVALID_MESSAGE" });
    }
    assert.equal(session.running, false);
    await session[Symbol.asyncDispose]();
    await assert.rejects(session.send("late"), { code: "CLOSED" });
  });

  it("a failed step write stops the turn with a STORAGE error event instead of losing it silently", async () => {
    const inner = new MemorySessionStorage();
    let appends = 0;
    const storage = withAppend(inner, async (id, messages, patch) => {
      // 1: the user message, 2: the first step (fails), 3: the turn's end.
      if (++appends === 2) throw new Error("disk full");
      return inner.appendMessages(id, messages, patch);
    });
    const model = scriptedModel([{ text: "step one" }, { text: "never stored" }]);
    const session = await createSession({ model, sessionStorage: storage });
    const events = await turn(session, "hi");
    const error = events.find((e) => e.type === "error");
    assert.equal(error?.type === "error" && (error.error as { code?: string }).code, "STORAGE");
    assert.match(error?.type === "error" ? error.message : "", /disk full/);
    assert.equal(stopOf(events).reason, "error");
    assert.ok(
      !events.some(
        (e) => e.type === "message" && e.message.role === "assistant" && !e.message.metadata?.synthetic,
      ),
    );
    const stored = (await storage.load(session.id))!;
    assert.deepEqual(
      stored.messages.map((m) => m.metadata?.synthetic ?? m.role),
      ["user", "interrupted"],
    );
    assert.deepEqual(stored.messages, session.getMessages(), "memory never runs ahead of storage");
  });

  it("a step write that committed but then threw is reloaded, so memory matches storage and later turns see it", async () => {
    const inner = new MemorySessionStorage();
    let appends = 0;
    const storage = withAppend(inner, async (id, messages, patch) => {
      await inner.appendMessages(id, messages, patch);
      if (++appends === 2) throw new Error("connection reset after commit"); // 2: the first step
    });
    const model = scriptedModel([{ text: "stored anyway" }, { text: "next" }]);
    const session = await createSession({ model, sessionStorage: storage });
    assert.equal(stopOf(await turn(session, "one")).reason, "error");
    const stored = (await storage.load(session.id))!;
    assert.deepEqual(session.getMessages(), stored.messages, "memory does not fall behind storage");
    assert.equal(session.getUsage().steps, 1);
    await turn(session, "two");
    assert.deepEqual(
      promptOf(model, 1).map((message) => message.text),
      ["one", "stored anyway", "two"],
    );
  });

  it("a turn whose end could not be stored either is closed by the next send() on the same object", async () => {
    const inner = new MemorySessionStorage();
    let appends = 0;
    const storage = withAppend(inner, async (id, messages, patch) => {
      // 1: the user message, 2: the first step, 3: the turn's end (both fail), 4: the close, 5: the next message.
      if ([2, 3].includes(++appends)) throw new Error("disk full");
      return inner.appendMessages(id, messages, patch);
    });
    const model = scriptedModel([{ text: "lost" }, { text: "second" }]);
    const session = await createSession({ model, sessionStorage: storage });
    assert.equal(stopOf(await turn(session, "one")).reason, "error");
    assert.equal(stopOf(await turn(session, "two")).reason, "completed");
    const stored = (await storage.load(session.id))!;
    assert.deepEqual(
      stored.messages.map((m) => m.metadata?.synthetic ?? m.role),
      ["user", "interrupted", "user", "assistant"],
    );
    assert.deepEqual(stored.messages[1]?.content, [
      { type: "text", text: "[Response interrupted: its end could not be stored.]" },
    ]);
    assert.deepEqual(stored.metadata["agent.turn"], {
      ...(stored.metadata["agent.turn"] as object),
      number: 2,
      status: "done",
    });
  });

  it("close() during send() waits for the stored message and ends that turn as interrupted", async () => {
    const inner = new MemorySessionStorage();
    let gate: () => void = () => {};
    const storage = withAppend(inner, async (id, messages, patch) => {
      if (messages.some((m) => m.role === "user")) await new Promise<void>((resolve) => (gate = resolve));
      return inner.appendMessages(id, messages, patch);
    });
    const model = scriptedModel([{ text: "never asked" }]);
    const session = await createSession({ model, sessionStorage: storage });
    const sending = session.send("hello");
    await new Promise((resolve) => setImmediate(resolve));
    const closing = session.close();
    gate();
    await sending;
    await closing;
    assert.equal(model.doStreamCalls.length, 0, "the model is not called after close()");
    assert.equal(stopOf(await collect(session)).reason, "interrupted");
    const roles = (await storage.load(session.id))!.messages.map((m) => m.metadata?.synthetic ?? m.role);
    assert.deepEqual(roles, ["user", "interrupted"]);
  });

  it("accepts a UIMessage-style message with parts", async () => {
    const model = scriptedModel([{ text: "seen" }]);
    const session = await createSession({ model });
    await session.send({ role: "user", parts: [{ type: "text", text: "look" }] });
    await collect(session);
    assert.deepEqual(promptOf(model, 0), [{ role: "user", text: "look" }]);
  });
});
