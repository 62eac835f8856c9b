// The memory middleware's edges: owners, failures (a store error surfaces; a failed or aborted stream stores
// nothing), the context reminder, tool calls left open, and the options it refuses.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { generateText, streamText, tool, wrapLanguageModel } from "ai";
import { z } from "zod";
import { sessionMemory } from "../../src/ai-sdk/index.js";
import { REMINDER_OPENING } from "../../src/context/reminder.js";
import { MemoryStore, Session, SessionManager, type SessionStore, SqliteStore } from "../../src/index.js";
import { MISSING_RESULT_TEXT } from "../../src/message/missing-result.js";
import { scriptedModel } from "../agent/helpers/mock-model.js";
import { generatingModel, lines, storedLines } from "./memory-helpers.js";

for (const [name, create] of [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
] as Array<[string, () => SessionStore]>) {
  describe(`sessionMemory edges (${name})`, () => {
    test("owner: the session is registered as the owner's; another owner's id is NOT_FOUND before the model runs", async () => {
      const store = create();
      const model = generatingModel((i) => ({ text: `answer ${i}` }));
      const alice = wrapLanguageModel({
        model,
        middleware: sessionMemory({ store, sessionId: "o1", owner: "alice" }),
      });
      await generateText({ model: alice, prompt: "alice's secret plan" });
      assert.equal((await new SessionManager(store).get("o1"))?.owner, "alice");
      const bob = wrapLanguageModel({
        model,
        middleware: sessionMemory({ store, sessionId: "o1", owner: "bob" }),
      });
      await assert.rejects(generateText({ model: bob, prompt: "show me" }), { code: "NOT_FOUND" });
      assert.equal(model.doGenerateCalls.length, 1, "bob's call never reached the model");
      assert.equal((await Session.create(store).forSession("o1").getHistory()).length, 2);
    });

    test("owner recall searches the owner's other sessions and never another owner's", async () => {
      const store = create();
      const model = generatingModel(() => ({ text: "noted" }));
      const call = async (sessionId: string, owner: string, prompt: string, recall = false) => {
        const middleware = sessionMemory({
          store,
          sessionId,
          owner,
          ...(recall ? { recall: { scope: "owner" } } : {}),
        });
        await generateText({ model: wrapLanguageModel({ model, middleware }), prompt });
      };
      await call("a-old", "alice", "The launch code word is marmalade.");
      await call("b-old", "bob", "Bob's code word is marmalade too.");
      await call("a-new", "alice", "What was the code word marmalade about?", true);
      const memory = lines(model.doGenerateCalls.at(-1)).find((line) => line.startsWith("system:")) ?? "";
      assert.match(memory, /in conversation "a-old": "The launch code word is marmalade\."/);
      assert.doesNotMatch(memory, /Bob/);
    });

    test("a store error surfaces from generateText and from streamText, never swallowed", async () => {
      const store = create();
      const session = Session.create(store).forSession("e1");
      const model = generatingModel(
        () => ({ text: "lost" }),
        () => session.close(),
      );
      const middleware = sessionMemory({ session });
      await assert.rejects(generateText({ model: wrapLanguageModel({ model, middleware }), prompt: "hi" }), {
        code: "CLOSED",
      });

      const other = Session.create(store).forSession("e2");
      const streaming = scriptedModel(() => ({ text: "lost too" }));
      streaming.onCall = () => other.close();
      const result = streamText({
        model: wrapLanguageModel({ model: streaming, middleware: sessionMemory({ session: other }) }),
        prompt: "hi",
      });
      // The stream errors with the store's error (not an error part): its reader and `text` both get it.
      await assert.rejects(Promise.resolve(result.text), { code: "CLOSED" });
      assert.equal((await Session.create(store).forSession("e2").getHistory()).length, 0);
    });

    test("two calls of one conversation at once: the one finishing second is a CONFLICT and stores nothing", async () => {
      const store = create();
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const model = generatingModel(
        (i) => ({ text: `answer ${i}` }),
        (i) => (i === 0 ? gate : undefined),
      );
      const memory = wrapLanguageModel({ model, middleware: sessionMemory({ store, sessionId: "cc" }) });
      const slow = generateText({ model: memory, prompt: "slow question" });
      while (model.doGenerateCalls.length === 0) await new Promise((resolve) => setImmediate(resolve));
      await generateText({ model: memory, prompt: "fast question" });
      release();
      await assert.rejects(slow, { code: "CONFLICT" });
      const history = await Session.create(store).forSession("cc").getHistory();
      assert.deepEqual(storedLines(history), ["user: fast question", "assistant: answer 1"]);
    });

    test("a stream that fails, or that is aborted, stores nothing: a retry sends the same prompt", async () => {
      const store = create();
      const session = Session.create(store).forSession("f1");
      const failing = scriptedModel([{ text: "half an", error: "connection reset" }]);
      const failed = streamText({
        model: wrapLanguageModel({ model: failing, middleware: sessionMemory({ session }) }),
        prompt: "question",
        onError: () => {},
      });
      await failed.consumeStream();
      assert.deepEqual(await session.getHistory(), []);

      const abort = new AbortController();
      const slow = scriptedModel([{ text: "one two three four five six" }]);
      const aborted = streamText({
        model: wrapLanguageModel({ model: slow, middleware: sessionMemory({ session }) }),
        prompt: "question",
        abortSignal: abort.signal,
      });
      for await (const _chunk of aborted.textStream) abort.abort();
      assert.deepEqual(await session.getHistory(), []);
    });

    test("the context reminder ends the latest user message for the call only; the store never holds it", async () => {
      const store = create();
      const date = { value: "2026-09-28" };
      const session = Session.create(store)
        .forSession("m1")
        .withContext("environment", {
          provider: { get: async () => `Today is ${date.value}.` },
          whenChanged: "remind",
        })
        .withCachedPrompt();
      await session.freezeSystemPrompt();
      date.value = "2026-09-29";
      const model = generatingModel(() => ({ text: "ok" }));
      await generateText({
        model: wrapLanguageModel({ model, middleware: sessionMemory({ session }) }),
        prompt: "hi",
      });
      const user = model.doGenerateCalls[0]!.prompt.at(-1)!;
      const texts = (user.content as Array<{ text?: string }>).map((part) => part.text ?? "");
      assert.equal(texts[0], "hi");
      assert.ok(texts[1]?.startsWith(REMINDER_OPENING));
      assert.doesNotMatch(JSON.stringify(await session.getHistory()), /2026-09-29/);

      const without = generatingModel(() => ({ text: "ok" }));
      const middleware = sessionMemory({ session, reminder: false });
      await generateText({ model: wrapLanguageModel({ model: without, middleware }), prompt: "again" });
      assert.doesNotMatch(JSON.stringify(without.doGenerateCalls[0]!.prompt), /CONTEXT REMINDER/);
    });

    test("a stored call the app never answered is closed with an error result in the next prompt", async () => {
      const store = create();
      const model = generatingModel((i) =>
        i === 0 ? { toolCalls: [{ id: "c9", name: "confirm", input: { ok: true } }] } : { text: "fine" },
      );
      const memory = wrapLanguageModel({ model, middleware: sessionMemory({ store, sessionId: "c1" }) });
      // A tool without execute: the call is the app's to answer, and it moves on without answering.
      const tools = {
        confirm: tool({ inputSchema: z.object({ ok: z.boolean() }), outputSchema: z.string() }),
      };
      await generateText({ model: memory, prompt: "Confirm?", tools });
      await generateText({ model: memory, prompt: "Never mind." });
      assert.deepEqual(lines(model.doGenerateCalls[1]), [
        "user: Confirm?",
        'assistant: call c9 {"ok":true}',
        `tool: result c9 ${JSON.stringify({ type: "error-text", value: MISSING_RESULT_TEXT })}`,
        "user: Never mind.",
      ]);
      const stored = await Session.create(store).forSession("c1").getHistory();
      assert.deepEqual(storedLines(stored).slice(1, 2), ["assistant: tool-confirm:input-available"]);
    });
  });
}

describe("sessionMemory options", () => {
  const store = new MemoryStore();
  const refused = (options: unknown, path: string, rule: string) =>
    assert.throws(() => sessionMemory(options as never), {
      code: "INVALID_ARGUMENT",
      issues: [{ path, rule }],
    });

  test("a mistake fails when the middleware is made, naming the field", () => {
    refused({}, "store", "required");
    refused({ store }, "sessionId", "required");
    refused({ session: Session.create(store).forSession("x"), store }, "store", "conflict");
    refused({ store, sessionId: "x", history: { maxMessages: 0 } }, "history.maxMessages", "range");
    refused({ store, sessionId: "x", history: { maxTokens: 1.5 } }, "history.maxTokens", "type");
    refused({ store, sessionId: "x", recall: { scope: "owner" } }, "recall.scope", "conflict");
    refused({ store, sessionId: "x", recall: { scope: "all" } }, "recall.scope", "one_of");
    refused({ store, sessionId: "x", recall: { limit: 21 } }, "recall.limit", "range");
    refused({ store, sessionId: "x", reminder: "yes" }, "reminder", "type");
    refused({ store, sessionId: "x", owner: "" }, "owner", "type");
  });
});
