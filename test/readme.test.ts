import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { convertToModelMessages, generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { loadChat } from "../src/ai-sdk/index.js";
import { Session } from "../src/index.js";
import { createCompactFunction } from "../src/utils/index.js";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

test("the README's memory quick start runs as written (with a mock model)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-readme-"));
  try {
    let call = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () =>
        ++call === 1
          ? {
              content: [
                {
                  type: "tool-call",
                  toolCallId: "c1",
                  toolName: "set_context",
                  input: JSON.stringify({ label: "memory", content: "User prefers dark roast." }),
                },
              ],
              finishReason: { unified: "tool-calls", raw: "tool_calls" },
              usage,
              warnings: [],
            }
          : {
              content: [{ type: "text", text: "Got it." }],
              finishReason: { unified: "stop", raw: "stop" },
              usage,
              warnings: [],
            },
    });
    const session = Session.create(join(dir, "agent.db"))
      .forSession("user-42")
      .withContext("soul", { provider: { get: async () => "You are a helpful assistant." } })
      .withContext("memory", { description: "Learned facts about the user", maxTokens: 1100 })
      .withCachedPrompt();
    await session.appendMessage({
      id: "u1",
      role: "user",
      parts: [{ type: "text", text: "I prefer dark roast." }],
    });
    const result = await generateText({
      model,
      system: await session.freezeSystemPrompt(),
      messages: await convertToModelMessages(await loadChat(session)),
      tools: await session.tools(),
      stopWhen: stepCountIs(5),
    });
    assert.equal(result.text, "Got it.");
    const prompt = await session.refreshSystemPrompt();
    assert.ok(
      prompt.endsWith(
        "MEMORY (Learned facts about the user) [1% — 6/1100 tokens] [writable]\n══════════════════════════════════════════════\nUser prefers dark roast.",
      ),
      prompt,
    );
    await session.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the README's compaction example: a short session compacts nothing, and explainCompaction says why", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-readme-"));
  try {
    let calls = 0;
    const callYourModel = async (_prompt: string) => {
      calls++;
      return "a summary";
    };
    const chat = Session.create(join(dir, "agent.db"))
      .forSession("user-42")
      .onCompaction(createCompactFunction({ summarize: (prompt) => callYourModel(prompt) }))
      .compactAfter(100_000);
    for (let i = 0; i < 8; i++) {
      const role = i % 2 === 0 ? "user" : "assistant";
      await chat.appendMessage({ id: `m${i}`, role, parts: [{ type: "text", text: `message number ${i}` }] });
    }
    const plan = await chat.explainCompaction();
    assert.equal(plan.compacts, false);
    assert.ok(!plan.compacts);
    assert.equal(plan.reason, "tail-covers-history");
    assert.equal(plan.messages, 8);
    assert.equal(plan.tailTokenBudget, 20_000);
    assert.equal(plan.protectHead, 3);
    assert.match(
      plan.message,
      /after the 3 first messages \(protectHead\), the rest of the 8 messages \(\d+ estimated tokens in all\) fits the verbatim tail of 20000 tokens \(tailTokenBudget/,
    );
    assert.equal(await chat.planCompaction(), null, "planCompaction keeps its null");
    assert.equal(await chat.compact(), null);
    assert.equal(calls, 0, "the model is not called");
    await chat.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
