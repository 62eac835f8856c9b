import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { convertToModelMessages, streamText } from "ai";
import { type ChatRequestBody, persistChatTurn, withReminder } from "../../src/ai-sdk/index.js";
import { REMINDER_OPENING, REMINDER_PREAMBLE } from "../../src/context/reminder.js";
import { MemoryStore, Session, type SessionStore, SqliteStore } from "../../src/index.js";
import { scriptedModel } from "../agent/helpers/mock-model.js";
import { NodeChat } from "./harness.js";

type Prompt = Array<{ role: string; content: unknown }>;

/** A date block the test moves on, and the route of docs/AI-SDK.md with the frozen prompt as `system`. */
function setup(store: SessionStore) {
  const date = { value: "2026-09-28" };
  const open = (id: string) =>
    Session.create(store)
      .forSession(id)
      .withContext("environment", {
        provider: { get: async () => `Today is ${date.value}.` },
        whenChanged: "remind",
      })
      .withCachedPrompt();
  const prompts: Prompt[] = [];
  const model = scriptedModel((i) => ({ text: `answer ${i}` }));
  model.onCall = (_i, options) => {
    prompts.push(structuredClone(options.prompt) as Prompt);
  };
  const route = async (request: Request): Promise<Response> => {
    const { id, messages, trigger, messageId } = (await request.json()) as ChatRequestBody;
    const session = open(id);
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

const lastUserTexts = (prompt: Prompt): string[] => {
  const user = prompt.filter((m) => m.role === "user").at(-1);
  return ((user?.content ?? []) as Array<{ type: string; text?: string }>).map((p) => p.text ?? "");
};

for (const [name, create] of [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
] as const) {
  describe(`context reminders through persistChatTurn (${name})`, () => {
    test("ten turns: the model sees the new date after the cached prefix, the store never holds it", async () => {
      const store = create();
      const { date, open, prompts, route } = setup(store);
      const chat = new NodeChat("r1", route);
      await chat.sendMessage({ text: "hello" });
      const frozen = await open("r1").freezeSystemPrompt();
      const system = prompts[0]![0]!;
      assert.deepEqual(system, { role: "system", content: frozen });
      assert.deepEqual(lastUserTexts(prompts[0]!), ["hello"], "no reminder before a change");

      date.value = "2026-09-29";
      for (let turn = 1; turn <= 10; turn++) {
        await chat.sendMessage({ text: `question ${turn}` });
        const prompt = prompts[turn]!;
        assert.deepEqual(prompt[0], system, `turn ${turn}: the system prompt is byte-identical`);
        const [text, reminder] = lastUserTexts(prompt);
        assert.equal(text, `question ${turn}`);
        assert.ok(reminder?.startsWith(REMINDER_OPENING), `turn ${turn}: the reminder ends the user message`);
        assert.match(reminder!, /Today is 2026-09-29\.$/);
        // Earlier user messages go out as they did before: only the newest one carries the reminder.
        const earlier = prompt.filter((m) => m.role === "user").slice(0, -1);
        assert.ok(earlier.every((m) => !JSON.stringify(m).includes(REMINDER_PREAMBLE)));
      }
      const stored = JSON.stringify(await open("r1").getHistory());
      assert.ok(!stored.includes(REMINDER_PREAMBLE) && !stored.includes("2026-09-29"), "never stored");
      assert.ok(!JSON.stringify(chat.messages).includes(REMINDER_PREAMBLE), "never streamed to the page");
      assert.equal(await open("r1").freezeSystemPrompt(), frozen);

      await open("r1").refreshSystemPrompt();
      await chat.sendMessage({ text: "after the refresh" });
      const last = prompts.at(-1)!;
      assert.match(String(last[0]!.content), /Today is 2026-09-29\./);
      assert.deepEqual(lastUserTexts(last), ["after the refresh"]);
    });
  });
}

describe("withReminder", () => {
  const user = (id: string, text: string) => ({
    id,
    role: "user" as const,
    parts: [{ type: "text" as const, text }],
  });
  const answer = { id: "a", role: "assistant" as const, parts: [{ type: "text" as const, text: "hi" }] };

  test("appends to the latest user message, in copies; no reminder or no user message: unchanged", () => {
    const messages = [user("u1", "one"), answer, user("u2", "two"), answer];
    const out = withReminder(messages, "NOTE");
    assert.deepEqual(
      out[2]!.parts.map((p) => p.text),
      ["two", "NOTE"],
    );
    assert.equal(out[0], messages[0]);
    assert.deepEqual(
      messages[2]!.parts.map((p) => p.text),
      ["two"],
      "the input is untouched",
    );
    assert.equal(withReminder(messages, null), messages);
    assert.deepEqual(withReminder([answer], "NOTE"), [answer]);
  });

  test("a provider without reminder() (a store's SessionProvider) gets no reminder", async () => {
    const provider = new MemoryStore().session("p");
    const turn = await persistChatTurn(provider, { message: user("u1", "hi") });
    assert.equal(turn.reminder, null);
    assert.deepEqual(
      turn.messages.map((m) => m.id),
      ["u1"],
    );
  });
});
