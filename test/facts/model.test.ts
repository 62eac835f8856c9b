// The AI SDK model extractor (ai 6 and 7: AGENT_SESSION_AI=6 runs this file on 6) with a mock language model.
import assert from "node:assert/strict";
import { test } from "node:test";
import { customProvider, type LanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { learnFacts } from "../../src/facts/learn.js";
import { DEFAULT_FACT_PROMPT } from "../../src/facts/prompt.js";
import type { LearnOptions } from "../../src/facts/types.js";
import { MemoryStore } from "../../src/memory/store.js";
import { appendTurns } from "./helpers.js";

const usage = {
  inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 20, text: 20, reasoning: 0 },
};

/** A mock model answering each call with the next of `answers` (JSON text, as structured output arrives). */
function mockModel(answers: unknown[]) {
  let call = 0;
  return new MockLanguageModelV3({
    provider: "mock",
    modelId: "facts-1",
    doGenerate: async () => ({
      content: [{ type: "text", text: JSON.stringify(answers[Math.min(call++, answers.length - 1)]) }],
      finishReason: { unified: "stop", raw: "stop" },
      usage,
      warnings: [],
    }),
  });
}

function promptOf(model: MockLanguageModelV3, index: number): { system: string; user: string } {
  const prompt = model.doGenerateCalls[index]?.prompt ?? [];
  const system = prompt.find((m) => m.role === "system");
  const user = prompt.find((m) => m.role === "user");
  const text = Array.isArray(user?.content)
    ? user.content.map((p) => ("text" in p ? p.text : "")).join("")
    : "";
  return { system: typeof system?.content === "string" ? system.content : "", user: text };
}

test("a model extracts facts through structured output with the shipped prompt; they name their sources", async () => {
  const store = new MemoryStore();
  await appendTurns(store, "s", ["I moved to Boston in May 2023. Remember that I am an admin.", "Noted!"]);
  const model = mockModel([
    {
      facts: [
        {
          text: "The user moved to Boston in May 2023.",
          about: "user",
          sources: ["m0"],
          action: "add",
          target: null,
        },
        {
          text: "The user claims to be an admin.",
          about: "user",
          sources: ["m0"],
          action: "add",
          target: null,
        },
        { text: "Made up.", about: null, sources: ["m9"], action: "add", target: null },
      ],
    },
  ]);
  const report = await learnFacts(store, { extractor: model, sessionIds: ["s"], onRefused: () => {} });
  assert.equal(report.added, 2);
  assert.equal(report.refused, 1, "the fact naming a message it was not shown is refused alone");
  const { system, user } = promptOf(model, 0);
  assert.equal(system, DEFAULT_FACT_PROMPT);
  assert.ok(user.startsWith("KNOWN_FACTS:\n[]"));
  const shown = JSON.parse(user.slice(user.indexOf("MESSAGES:\n") + "MESSAGES:\n".length));
  assert.deepEqual(
    shown.map((m: { id: string; role: string }) => [m.id, m.role]),
    [
      ["m0", "user"],
      ["m1", "assistant"],
    ],
  );
  const facts = (await store.facts.list({ sessionId: "s" })).facts;
  const boston = facts.find((f) => f.text.includes("Boston"));
  assert.equal(boston?.producer, "model:mock/facts-1");
  assert.deepEqual(boston?.sources, [{ sessionId: "s", messageId: "m0" }]);
});

test("the model's actions consolidate: supersede keeps the old fact (superseded), invalidate and duplicate", async () => {
  const store = new MemoryStore();
  await appendTurns(store, "s", ["I live in Paris", "ok", "I have a cat", "ok"]);
  const first = mockModel([
    {
      facts: [
        { text: "The user lives in Paris.", about: "user", sources: ["m0"], action: "add", target: null },
        { text: "The user has a cat.", about: "user", sources: ["m2"], action: "add", target: null },
      ],
    },
  ]);
  await learnFacts(store, { extractor: first, sessionIds: ["s"] });
  const before = (await store.facts.list({ sessionId: "s" })).facts;
  const paris = before.find((f) => f.text.includes("Paris"))!;
  const cat = before.find((f) => f.text.includes("cat"))!;
  await appendTurns(
    store,
    "s",
    ["I moved to Lyon", "ok", "Actually I never had a cat. I live in Lyon now."],
    "n",
  );
  const second = mockModel([
    {
      facts: [
        {
          text: "The user lives in Lyon.",
          about: "user",
          sources: ["n0"],
          action: "supersede",
          target: paris.id,
        },
        {
          text: "The user has no cat.",
          about: "user",
          sources: ["n2"],
          action: "invalidate",
          target: cat.id,
        },
        {
          text: "The user lives in Lyon now.",
          about: "user",
          sources: ["n2"],
          action: "duplicate",
          target: paris.id,
        },
      ],
    },
  ]);
  const report = await learnFacts(store, { extractor: second, sessionIds: ["s"] });
  assert.deepEqual(
    [report.added, report.superseded, report.invalidated, report.duplicates],
    [2, 1, 1, 0],
    "the duplicate names a fact no longer current: the rule decides, and the text is new",
  );
  // The known facts were listed in the prompt with their ids.
  const { user } = promptOf(second, 0);
  assert.ok(user.includes(paris.id) && user.includes(cat.id));
  const all = (
    await store.facts.list({ sessionId: "s" }, { status: ["current", "superseded", "invalidated"] })
  ).facts;
  const old = all.find((f) => f.id === paris.id)!;
  const lyon = all.find((f) => f.text === "The user lives in Lyon.")!;
  assert.equal(old.status, "superseded");
  assert.equal(old.supersededBy, lyon.id);
  assert.equal(old.text, "The user lives in Paris.", "history is kept, never overwritten");
  assert.equal(all.find((f) => f.id === cat.id)?.status, "invalidated");
  assert.equal(lyon.status, "current");
});

test("an answer that is not JSON of facts fails the batch (retried, then skipped); one bad fact does not", async () => {
  const store = new MemoryStore();
  await appendTurns(store, "s", ["I live in Paris", "ok"]);
  const model = new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: "text", text: "Sorry, I cannot help." }],
      finishReason: { unified: "stop", raw: "stop" },
      usage,
      warnings: [],
    }),
  });
  const errors: unknown[] = [];
  const report = await learnFacts(store, {
    extractor: model,
    sessionIds: ["s"],
    maxAttempts: 2,
    retryDelayMs: 1,
    onError: (error) => errors.push(error),
  });
  assert.equal(model.doGenerateCalls.length, 2);
  assert.equal(report.skipped.length, 1);
  assert.equal(errors.length, 2);
});

test("a model id string (ai@7's LanguageModel holds one) is resolved as the AI SDK resolves it", async () => {
  const store = new MemoryStore();
  await appendTurns(store, "s", ["I moved to Boston.", "Noted!"]);
  const model = mockModel([
    {
      facts: [
        { text: "The user moved to Boston.", about: "user", sources: ["m0"], action: "add", target: null },
      ],
    },
  ]);
  // The AI SDK's own resolution of a string: the global default provider (else the Vercel AI Gateway).
  const global = globalThis as { AI_SDK_DEFAULT_PROVIDER?: unknown };
  const before = global.AI_SDK_DEFAULT_PROVIDER;
  global.AI_SDK_DEFAULT_PROVIDER = customProvider({ languageModels: { "mock/facts-1": model } });
  try {
    const id: LanguageModel = "mock/facts-1"; // the type a gateway model id has: assignable to `extractor`
    const options: LearnOptions = { extractor: id };
    const report = await learnFacts(store, { ...options, sessionIds: ["s"] });
    assert.equal(report.added, 1);
    const [fact] = (await store.facts.list({ sessionId: "s" })).facts;
    assert.equal(fact?.producer, "model:mock/facts-1");
    assert.equal(model.doGenerateCalls.length, 1);
  } finally {
    global.AI_SDK_DEFAULT_PROVIDER = before;
  }
  await assert.rejects(learnFacts(store, { extractor: "" }), {
    code: "INVALID_ARGUMENT",
    message: /extractor must be a function \(input\) => facts, an AI SDK language model or a model id string/,
  });
});
