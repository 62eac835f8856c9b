// The memory middleware: `wrapLanguageModel({ model, middleware: sessionMemory(...) })` gives each call the
// stored history and stores the call's new messages and answer, for generateText and streamText, on real stores.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { z } from "zod";
import { sessionMemory } from "../../src/ai-sdk/index.js";
import { MemoryStore, Session, type SessionStore, SqliteStore } from "../../src/index.js";
import { scriptedModel } from "../agent/helpers/mock-model.js";
import { generatingModel, lines, storedLines } from "./memory-helpers.js";

for (const [name, create] of [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
] as Array<[string, () => SessionStore]>) {
  describe(`sessionMemory (${name})`, () => {
    test("generateText, three turns: each call gets the stored path, the store holds every turn once", async () => {
      const store = create();
      const model = generatingModel((i) => ({ text: `answer ${i}` }));
      const memory = wrapLanguageModel({ model, middleware: sessionMemory({ store, sessionId: "g1" }) });
      for (const question of ["first", "second", "third"]) {
        await generateText({ model: memory, system: "Be brief.", prompt: question });
      }
      assert.deepEqual(lines(model.doGenerateCalls[2]), [
        "system: Be brief.",
        "user: first",
        "assistant: answer 0",
        "user: second",
        "assistant: answer 1",
        "user: third",
      ]);
      const history = await Session.create(store).forSession("g1").getHistory();
      assert.deepEqual(storedLines(history), [
        "user: first",
        "assistant: answer 0",
        "user: second",
        "assistant: answer 1",
        "user: third",
        "assistant: answer 2",
      ]);
    });

    test("streamText, two turns: the answer is stored when the stream finishes, before the result resolves", async () => {
      const store = create();
      const model = scriptedModel((i) => ({ text: `streamed answer ${i}` }));
      const session = Session.create(store).forSession("s1");
      const memory = wrapLanguageModel({ model, middleware: sessionMemory({ session }) });
      const first = streamText({ model: memory, prompt: "hello" });
      assert.equal(await first.text, "streamed answer 0");
      assert.deepEqual(storedLines(await session.getHistory()), [
        "user: hello",
        "assistant: streamed answer 0",
      ]);
      const second = streamText({ model: memory, prompt: "again" });
      assert.equal(await second.text, "streamed answer 1");
      assert.deepEqual(lines(model.doStreamCalls[1]), [
        "user: hello",
        "assistant: streamed answer 0",
        "user: again",
      ]);
      assert.equal((await session.getHistory()).length, 4);
    });

    for (const mode of ["generate", "stream"] as const) {
      test(`tool calls (${mode}Text): each step's messages are stored once, the next step is not doubled`, async () => {
        const store = create();
        const step = (i: number) =>
          i === 0
            ? { toolCalls: [{ id: "c1", name: "weather", input: { city: "Oslo" } }] }
            : { text: "It is cold." };
        const model = mode === "generate" ? generatingModel(step) : scriptedModel(step);
        const memory = wrapLanguageModel({ model, middleware: sessionMemory({ store, sessionId: "t1" }) });
        const tools = {
          weather: tool({
            inputSchema: z.object({ city: z.string() }),
            execute: async ({ city }) => `${city}: -3°C`,
          }),
        };
        const args = { model: memory, prompt: "Weather in Oslo?", tools, stopWhen: stepCountIs(3) };
        const text = mode === "generate" ? (await generateText(args)).text : await streamText(args).text;
        assert.equal(text, "It is cold.");
        const calls = mode === "generate" ? model.doGenerateCalls : model.doStreamCalls;
        assert.deepEqual(lines(calls[1]), [
          "user: Weather in Oslo?",
          'assistant: call c1 {"city":"Oslo"}',
          'tool: result c1 {"type":"text","value":"Oslo: -3°C"}',
        ]);
        const history = await Session.create(store).forSession("t1").getHistory();
        assert.deepEqual(storedLines(history), [
          "user: Weather in Oslo?",
          "assistant: tool-weather:input-available",
          "tool: tool-weather:output-available",
          "assistant: It is cold.",
        ]);
      });
    }

    test("an app passing the whole history is deduplicated; an assistant message the store lacks is refused", async () => {
      const store = create();
      const model = generatingModel((i) => ({ text: `answer ${i}` }));
      const memory = wrapLanguageModel({ model, middleware: sessionMemory({ store, sessionId: "d1" }) });
      await generateText({ model: memory, prompt: "one" });
      await generateText({
        model: memory,
        messages: [
          { role: "user", content: "one" },
          { role: "assistant", content: "answer 0" },
          { role: "user", content: "two" },
        ],
      });
      assert.deepEqual(lines(model.doGenerateCalls[1]), ["user: one", "assistant: answer 0", "user: two"]);
      const session = Session.create(store).forSession("d1");
      assert.equal((await session.getHistory()).length, 4);
      await assert.rejects(
        generateText({
          model: memory,
          messages: [
            { role: "user", content: "one" },
            { role: "assistant", content: "an answer never given" },
            { role: "user", content: "three" },
          ],
        }),
        (error: Error) => /assistant message the session has not stored/.test(error.message),
      );
      assert.equal((await session.getHistory()).length, 4, "nothing stored by the refused call");
    });

    test("the history budget keeps the newest turns, starts on a user message and says what it left out", async () => {
      const store = create();
      const model = generatingModel((i) => ({ text: `answer ${i}` }));
      const middleware = sessionMemory({ store, sessionId: "b1", history: { maxMessages: 3 } });
      const memory = wrapLanguageModel({ model, middleware });
      for (const question of ["q0", "q1", "q2"]) await generateText({ model: memory, prompt: question });
      const prompt = lines(model.doGenerateCalls[2]);
      assert.match(prompt[0]!, /^system: Earlier messages of this conversation are left out .*3 messages/);
      // The budget's 3 newest are answer 0, q1, answer 1: the answer without its question is dropped too.
      assert.deepEqual(prompt.slice(1), ["user: q1", "assistant: answer 1", "user: q2"]);
    });

    test("recall: a message beyond the budget comes back as quoted data in a system message", async () => {
      const store = create();
      const model = generatingModel((i) => ({ text: `answer ${i}` }));
      const middleware = sessionMemory({
        store,
        sessionId: "r1",
        history: { maxMessages: 2 },
        recall: { limit: 2, maxChars: 500 },
      });
      const memory = wrapLanguageModel({ model, middleware });
      await generateText({ model: memory, prompt: "My cat is called Mittens." });
      await generateText({ model: memory, prompt: "Unrelated weather chat." });
      await generateText({ model: memory, prompt: "What is my cat called?" });
      const prompt = lines(model.doGenerateCalls[2]);
      // One system message: the budget's marker, then the hit as a JSON string (the prompt's other copies left out).
      const [memoryLine, ...rest] = prompt;
      assert.match(memoryLine!, /^system: Earlier messages .*left out/);
      assert.match(
        memoryLine!,
        /Recalled from earlier messages .*\n1\. user at \S+: "My cat is called Mittens\."$/s,
      );
      assert.deepEqual(rest, [
        "user: Unrelated weather chat.",
        "assistant: answer 1",
        "user: What is my cat called?",
      ]);
    });
  });
}
