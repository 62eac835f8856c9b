// The AI SDK memory middleware's recall goes through Session.search, so a fact lifts its source turn into the
// prompt's recall section (docs/FACTS.md#recall), and one session's facts stay out of another's.
import assert from "node:assert/strict";
import { test } from "node:test";
import { generateText, wrapLanguageModel } from "ai";
import { sessionMemory } from "../../src/ai-sdk/index.js";
import { MemoryStore } from "../../src/memory/store.js";
import { generatingModel, lines } from "../ai-sdk/memory-helpers.js";

test("the middleware's recall brings a turn only a fact matches", async () => {
  const store = new MemoryStore();
  const model = generatingModel(() => ({ text: "ok" }));
  const middleware = sessionMemory({ store, sessionId: "dana", history: { maxMessages: 2 }, recall: true });
  const memory = wrapLanguageModel({ model, middleware });
  await generateText({ model: memory, prompt: "I teach chemistry at the high school downtown." });
  await generateText({ model: memory, prompt: "Filler turn one." });
  await generateText({ model: memory, prompt: "Filler turn two." });
  const history = await store.session("dana").getHistory();
  const source = history.find((m) => JSON.stringify(m.parts).includes("chemistry"));
  assert.ok(source);
  const question = "What is Dana's profession?";
  await generateText({ model: memory, prompt: question });
  assert.doesNotMatch(lines(model.doGenerateCalls[3]).join("\n"), /chemistry/, "no word of it matches");
  await store.facts.add({ sessionId: "dana" }, [
    {
      text: "Dana's profession: chemistry teacher.",
      about: "Dana",
      observedAt: Date.now(),
      sources: [{ sessionId: "dana", messageId: source.id }],
      producer: "recorded:test",
    },
  ]);
  await generateText({ model: memory, prompt: question });
  assert.match(
    lines(model.doGenerateCalls[4]).join("\n"),
    /"I teach chemistry at the high school downtown\."/,
  );
  // Another session's recall reads its own facts only.
  const other = wrapLanguageModel({
    model,
    middleware: sessionMemory({ store, sessionId: "other", history: { maxMessages: 2 }, recall: true }),
  });
  await generateText({ model: other, prompt: question });
  assert.doesNotMatch(lines(model.doGenerateCalls[5]).join("\n"), /chemistry/);
});
