import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { convertToModelMessages, streamText, type UIMessage } from "ai";
import { type ChatRequestBody, persistChatTurn } from "../../src/ai-sdk/index.js";
import { REMINDER_OPENING } from "../../src/context/reminder.js";
import { MemoryStore, Session, SessionError, type SessionStore, SqliteStore } from "../../src/index.js";
import { scriptedModel } from "../agent/helpers/mock-model.js";
import { warningsOf } from "../helpers/warnings.js";
import { NodeChat } from "./harness.js";

type Prompt = Array<{ role: string; content: unknown }>;

/** A session with a date block to remind; `fail` makes its provider throw once the prompt is frozen. */
function setup(store: SessionStore) {
  const date = { value: "2026-09-28", fail: false };
  const open = (id: string) =>
    Session.create(store)
      .forSession(id)
      .withContext("environment", {
        provider: {
          get: async () => {
            if (date.fail) throw new Error("calendar service down");
            return `Today is ${date.value}.`;
          },
        },
        whenChanged: "remind",
      })
      .withCachedPrompt();
  const prompts: Prompt[] = [];
  const model = scriptedModel((i) => ({ text: `answer ${i}` }));
  model.onCall = (_i, options) => {
    prompts.push(structuredClone(options.prompt) as Prompt);
  };
  // A server that keeps its Sessions open: a provider that fails later fails a Session already loaded.
  const held = new Map<string, Session>();
  const route = async (request: Request): Promise<Response> => {
    const { id, messages, trigger, messageId } = (await request.json()) as ChatRequestBody;
    const session = held.get(id) ?? open(id);
    held.set(id, session);
    const turn = await persistChatTurn(session, { messages, trigger, messageId });
    const result = streamText({
      model,
      system: await session.freezeSystemPrompt(),
      messages: await convertToModelMessages(turn.messages),
    });
    return result.toUIMessageStreamResponse(turn.streamOptions);
  };
  return { date, open, prompts, route };
}

const userTexts = (message: UIMessage | undefined): string[] =>
  (message?.parts ?? []).map((p) => (p.type === "text" ? p.text : p.type));

const lastUserTexts = (prompt: Prompt): string[] => {
  const user = prompt.filter((m) => m.role === "user").at(-1);
  return ((user?.content ?? []) as Array<{ text?: string }>).map((p) => p.text ?? "");
};

/** A genuine reminder of the date block: what `Session.reminder()` returns once the date moved on. */
async function genuineReminder(): Promise<string> {
  const { date, open } = setup(new MemoryStore());
  await open("g").freezeSystemPrompt();
  date.value = "2026-09-29";
  const reminder = await open("g").reminder();
  assert.ok(typeof reminder === "string");
  assert.ok(reminder.startsWith(REMINDER_OPENING));
  return reminder;
}

const user = (id: string, text: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] });

for (const [name, create] of [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
] as const) {
  describe(`a user cannot forge a context reminder (${name})`, () => {
    test("typed with no reminder pending, it reaches the model redrawn, and is stored as typed", async () => {
      const forged = await genuineReminder();
      const store = create();
      const { open } = setup(store);
      const session = open("f1");
      await session.freezeSystemPrompt();
      const turn = await persistChatTurn(session, { message: user("u1", `hi\n${forged}`) });
      assert.equal(turn.reminder, null);
      const [text] = userTexts(turn.messages.at(-1));
      assert.notEqual(text, `hi\n${forged}`);
      assert.ok(!text!.includes(REMINDER_OPENING), "it does not open like a genuine reminder");
      assert.ok(!text!.includes("═"), "no border of the library's");
      assert.match(text!, /^CONTEXT REMINDER \(readonly\)$/m);
      assert.match(text!, /^ENVIRONMENT \(readonly\)$/m);
      assert.match(text!, /Today is 2026-09-29\.$/, "the user's words are all there");
      // Only the model's copy is redrawn: the store, the page and the stream's messages keep what was typed.
      assert.deepEqual(userTexts(turn.streamOptions.originalMessages.at(-1)), [`hi\n${forged}`]);
      assert.deepEqual(userTexts((await session.getHistory()).at(-1) as UIMessage), [`hi\n${forged}`]);
    });

    test("typed while a genuine one is pending, the model tells them apart; the genuine one is byte-identical", async () => {
      const forged = await genuineReminder();
      const { date, open, prompts, route } = setup(create());
      const chat = new NodeChat("f2", route);
      await chat.sendMessage({ text: "hello" });
      date.value = "2026-09-29";
      const genuine = await open("f2").reminder();
      assert.equal(genuine, forged, "the user typed exactly what the library sends");

      await chat.sendMessage({ text: forged });
      const [typed, sent, ...rest] = lastUserTexts(prompts.at(-1)!);
      assert.deepEqual(rest, []);
      assert.equal(sent, genuine, "the genuine reminder goes out byte-identical, last");
      assert.notEqual(typed, sent, "the typed copy is not byte-identical");
      assert.ok(sent!.startsWith(REMINDER_OPENING) && !typed!.includes(REMINDER_OPENING));
      assert.deepEqual(userTexts(chat.messages.findLast((m) => m.role === "user")), [forged]);
    });
  });
}

describe("a remind block whose provider throws", () => {
  test("does not fail the chat request: it is answered without a reminder and the failure is a warning", async () => {
    const { date, open, prompts, route } = setup(new SqliteStore(":memory:"));
    const chat = new NodeChat("t1", route);
    await chat.sendMessage({ text: "hello" });
    date.fail = true;
    const warnings = await warningsOf("AgentSessionContextWarning", () =>
      chat.sendMessage({ text: "still there?" }),
    );
    assert.equal(chat.error, undefined);
    assert.deepEqual(lastUserTexts(prompts.at(-1)!), ["still there?"], "answered without a reminder");
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0]!.message,
      /context reminder skipped.*block "environment".*calendar service down/,
    );
    const cause = warnings[0]!.cause;
    assert.ok(
      cause instanceof SessionError && cause.code === "STORAGE",
      "the reported error is a SessionError",
    );
    date.fail = false;
    const history = await open("t1").getHistory();
    assert.deepEqual(
      history.map((m) => m.role),
      ["user", "assistant", "user", "assistant"],
      "the request and its answer are stored",
    );
  });

  test("persistChatTurn resolves with the stored turn and no reminder", async () => {
    const { date, open } = setup(new MemoryStore());
    const session = open("t2");
    await session.freezeSystemPrompt();
    date.fail = true;
    const warnings = await warningsOf("AgentSessionContextWarning", async () => {
      const turn = await persistChatTurn(session, { message: user("u1", "hi") });
      assert.equal(turn.reminder, null);
      assert.deepEqual(userTexts(turn.messages.at(-1)), ["hi"]);
    });
    assert.equal(warnings.length, 1);
    assert.equal((await session.getHistory()).length, 1);
  });
});
