import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { convertToModelMessages, generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { loadChat, persistChatTurn } from "../../src/ai-sdk/index.js";
import { MemoryStore, Session, type SessionStore, SqliteStore } from "../../src/index.js";
import { scriptedModel } from "../agent/helpers/mock-model.js";
import { postgresStores } from "../fixtures/postgres-stores.js";
import { rejectsWithIssue } from "../helpers/session-error.js";
import { chatRoute, NodeChat, textOf } from "./harness.js";

const shape = (m: { id: string; role: string; parts: unknown[] }) =>
  JSON.parse(JSON.stringify({ id: m.id, role: m.role, parts: m.parts }));
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
const answers = () => scriptedModel((i) => ({ text: `answer ${i}` }));

async function texts(session: Session, ids: string[]): Promise<string[]> {
  return Promise.all(ids.map(async (id) => textOf((await session.getMessage(id)) ?? undefined)));
}

async function branchTexts(session: Session, id: string): Promise<string[]> {
  return (await session.getBranches(id)).map((m) => textOf(m));
}

async function pathTexts(session: Session, leafId?: string): Promise<string[]> {
  return (await session.getHistory(leafId)).map((m) => textOf(m));
}

const postgres = await postgresStores("chat_turn");
const backends: Array<[string, () => SessionStore]> = [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
];
if (postgres) backends.push(["postgres", postgres]);

for (const [name, create] of backends) {
  describe(`persistChatTurn with useChat (${name})`, () => {
    test("submit, regenerate, edit, regenerate after the edit, submit again: the tree has every branch", async () => {
      const store = create();
      const chat = new NodeChat("c1", chatRoute(store, answers()));
      const session = Session.create(store).forSession("c1");
      await chat.sendMessage({ text: "first" });
      await chat.sendMessage({ text: "second" });
      const [u1, a1, u2, a2] = chat.messages.map((m) => m.id);
      assert.deepEqual(await pathTexts(session), ["first", "answer 0", "second", "answer 1"]);

      await chat.regenerate(); // the last answer gets a sibling
      assert.deepEqual(await branchTexts(session, u2!), ["answer 1", "answer 2"]);
      assert.equal(chat.messages.length, 4);

      await chat.sendMessage({ text: "second, edited", messageId: u2! });
      assert.deepEqual(await branchTexts(session, a1!), ["second", "second, edited"]);
      const edited = (await session.getBranches(a1!))[1]!;
      assert.deepEqual(await branchTexts(session, edited.id), ["answer 3"]);
      assert.deepEqual(await texts(session, [u1!, a2!]), ["first", "answer 1"]);

      await chat.regenerate(); // the page still calls the edit by its old id
      assert.deepEqual(await branchTexts(session, edited.id), ["answer 3", "answer 4"]);

      await chat.sendMessage({ text: "third" });
      assert.deepEqual(await pathTexts(session), [
        "first",
        "answer 0",
        "second, edited",
        "answer 4",
        "third",
        "answer 5",
      ]);
      assert.deepEqual(
        chat.messages.map((m) => textOf(m)),
        await pathTexts(session),
        "the page and the store agree",
      );
      assert.deepEqual(await pathTexts(session, a2), ["first", "answer 0", "second", "answer 1"]);
    });

    test("a reloaded page continues from the stored history", async () => {
      const store = create();
      const route = chatRoute(store, answers());
      const chat = new NodeChat("c2", route);
      await chat.sendMessage({ text: "hello" });
      await chat.sendMessage({ text: "again" });
      const session = Session.create(store).forSession("c2");
      const reloaded = new NodeChat("c2", route, await loadChat(session));
      assert.deepEqual(reloaded.messages.map(shape), chat.messages.map(shape), "the same messages come back");
      await reloaded.sendMessage({ text: "edit", messageId: reloaded.messages[2]!.id });
      assert.deepEqual(await branchTexts(session, reloaded.messages[1]!.id), ["again", "edit"]);
      await reloaded.regenerate();
      assert.equal((await pathTexts(session)).length, 4);
    });

    test("regenerate({ messageId }) of an earlier answer: a sibling of it, the later turns stay on the old branch", async () => {
      const store = create();
      const chat = new NodeChat("c4", chatRoute(store, answers()));
      const session = Session.create(store).forSession("c4");
      await chat.sendMessage({ text: "first" });
      await chat.sendMessage({ text: "second" });
      const [u1, a1, , a2] = chat.messages.map((m) => m.id);
      await chat.regenerate({ messageId: a1! }); // the page drops a1 and everything after it
      assert.deepEqual(await branchTexts(session, u1!), ["answer 0", "answer 2"]);
      assert.deepEqual(await pathTexts(session), ["first", "answer 2"]);
      assert.deepEqual(await pathTexts(session, a2!), ["first", "answer 0", "second", "answer 1"]);
      assert.deepEqual(
        chat.messages.map((m) => textOf(m)),
        await pathTexts(session),
      );
    });

    test("a continuation after a client-side tool result replaces the answer in place", async () => {
      const store = create();
      const model = scriptedModel([
        { toolCalls: [{ id: "call-1", name: "confirm", input: { question: "Deploy?" } }] },
        { text: "Deploying now." },
      ]);
      const tools = {
        confirm: tool({ inputSchema: z.object({ question: z.string() }), outputSchema: z.string() }),
      };
      const chat = new NodeChat("c3", chatRoute(store, model, tools));
      await chat.sendMessage({ text: "deploy it" });
      const answerId = chat.messages[1]!.id;
      await chat.addToolOutput({ tool: "confirm", toolCallId: "call-1", output: "yes" });
      await chat.sendMessage(); // what sendAutomaticallyWhen does: trigger submit-message, messageId = the answer
      const session = Session.create(store).forSession("c3");
      const history = await session.getHistory();
      assert.deepEqual(
        history.map((m) => m.id),
        [chat.messages[0]!.id, answerId],
      );
      const parts = history[1]!.parts;
      assert.equal(parts.find((p) => p.type === "tool-confirm")?.output, "yes");
      assert.equal(textOf(history[1]), "Deploying now.");
      assert.deepEqual(shape(history[1]!), shape(chat.messages[1]!), "the store holds what the page shows");
    });

    test("a tool approval: the page's answer is taken into the stored answer, and the server runs the tool", async () => {
      const store = create();
      const model = scriptedModel([
        { toolCalls: [{ id: "call-1", name: "deploy", input: { target: "prod" } }] },
        { text: "Deployed." },
      ]);
      const runs: string[] = [];
      const tools = {
        deploy: tool({
          inputSchema: z.object({ target: z.string() }),
          needsApproval: true,
          execute: async ({ target }) => {
            runs.push(target);
            return `deployed ${target}`;
          },
        }),
      };
      const chat = new NodeChat("c5", chatRoute(store, model, tools));
      await chat.sendMessage({ text: "deploy it" });
      const asked = chat.messages[1]!.parts.find((p) => p.type === "tool-deploy") as {
        state: string;
        approval: { id: string };
      };
      assert.equal(asked.state, "approval-requested");
      await chat.addToolApprovalResponse({ id: asked.approval.id, approved: true });
      await chat.sendMessage();
      assert.deepEqual(runs, ["prod"], "the approved call ran once, on the server");
      const session = Session.create(store).forSession("c5");
      const history = await session.getHistory();
      assert.equal(history.length, 2);
      const call = history[1]!.parts.find((p) => p.type === "tool-deploy");
      assert.equal(call?.state, "output-available");
      assert.equal(call?.output, "deployed prod");
      assert.equal(textOf(history[1]), "Deployed.");
      assert.deepEqual(shape(history[1]!), shape(chat.messages[1]!), "the store holds what the page shows");
    });

    test("generateText: the request and what the model returned are stored, tool calls included", async () => {
      const store = create();
      const session = Session.create(store)
        .forSession("g1")
        .withContext("memory", { description: "Facts", maxTokens: 500 });
      const input = JSON.stringify({ label: "memory", content: "Likes tea", action: "append" });
      const model = new MockLanguageModelV3({
        doGenerate: [
          {
            content: [{ type: "tool-call", toolCallId: "m1", toolName: "set_context", input }],
            finishReason: { unified: "tool-calls", raw: "tool_calls" },
            usage,
            warnings: [],
          },
          {
            content: [{ type: "text", text: "Noted." }],
            finishReason: { unified: "stop", raw: "stop" },
            usage,
            warnings: [],
          },
        ],
      });
      const turn = await persistChatTurn(session, {
        message: { id: "u1", role: "user", parts: [{ type: "text", text: "I like tea" }] },
      });
      const result = await generateText({
        model,
        messages: await convertToModelMessages(turn.messages),
        tools: await session.tools(),
        stopWhen: stepCountIs(3),
      });
      const answer = await turn.saveResult(result);
      const history = await loadChat(session);
      assert.deepEqual(
        history.map((m) => m.id),
        ["u1", answer.id],
      );
      const call = history[1]!.parts.find((p) => p.type === "tool-set_context");
      assert.equal((call as { state?: string } | undefined)?.state, "output-available");
      assert.equal(textOf(history[1]), "Noted.");
      assert.equal(
        (await convertToModelMessages(history)).length,
        4,
        "user, assistant call, tool result, text",
      );
      const next = await persistChatTurn(session, {
        message: { id: "u2", role: "user", parts: [{ type: "text", text: "And coffee?" }] },
      });
      assert.deepEqual(
        next.messages.map((m) => m.id),
        ["u1", answer.id, "u2"],
      );
    });
  });
}

describe("persistChatTurn input", () => {
  test("an edit sent as one message is UNSUPPORTED and names the body that stores it", async () => {
    const session = Session.create(new MemoryStore()).forSession("one");
    await persistChatTurn(session, {
      message: { id: "u1", role: "user", parts: [{ type: "text", text: "a" }] },
    });
    await assert.rejects(
      persistChatTurn(session, { message: { id: "u1", role: "user", parts: [{ type: "text", text: "b" }] } }),
      { code: "UNSUPPORTED" },
    );
    assert.deepEqual(await pathTexts(session), ["a"], "nothing was written");
  });

  test("an answer aborted before any part is not stored; one with parts is, under the request", async () => {
    const session = Session.create(new MemoryStore()).forSession("abort");
    const turn = await persistChatTurn(session, {
      messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }],
      trigger: "submit-message",
    });
    await turn.onFinish({
      responseMessage: { id: "a1", role: "assistant", parts: [] },
      isContinuation: false,
    });
    assert.deepEqual(await pathTexts(session), ["hi"]);
    const partial = { id: "a2", role: "assistant" as const, parts: [{ type: "text" as const, text: "Hel" }] };
    await turn.onFinish({ responseMessage: partial, isContinuation: false });
    assert.deepEqual(await pathTexts(session), ["hi", "Hel"]);
  });

  test("an answer stored without an id generator (an empty id) is refused at its id", async () => {
    const session = Session.create(new MemoryStore());
    // What onFinish's responseMessage is when toUIMessageStreamResponse got no generateMessageId.
    const responseMessage = { id: "", role: "assistant" as const, parts: [{ type: "text", text: "hi" }] };
    await rejectsWithIssue(session.appendMessage(responseMessage), {
      code: "INVALID_MESSAGE",
      path: "id",
      rule: "format",
    });
  });

  test("bad requests are INVALID_ARGUMENT", async () => {
    const session = Session.create(new MemoryStore());
    for (const bad of [{ messages: [] }, {}, { messages: "x" }, { messages: [], message: {} }]) {
      await assert.rejects(persistChatTurn(session, bad as never), { code: "INVALID_ARGUMENT" });
    }
    const messages = [{ id: "u", role: "user" as const, parts: [] }];
    await assert.rejects(persistChatTurn(session, { messages, trigger: "resume-stream" as never }), {
      code: "INVALID_ARGUMENT",
    });
  });
});
