import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { MemoryStore, Session, SqliteStore } from "../../src/index.js";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** A model that calls set_context once, then answers. */
function memoryWritingModel() {
  let call = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      call++;
      if (call === 1) {
        return {
          content: [
            {
              type: "tool-call",
              toolCallId: "call-1",
              toolName: "set_context",
              input: JSON.stringify({
                label: "memory",
                content: "User prefers dark roast.",
                action: "append",
              }),
            },
          ],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: [],
        };
      }
      return {
        content: [{ type: "text", text: "Noted!" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      };
    },
  });
}

for (const [name, create] of [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
] as const) {
  describe(`AI SDK generateText with the memory tools (${name})`, () => {
    test("the model's set_context call changes the block; the frozen prompt waits for refresh", async () => {
      const session = Session.create(create())
        .withContext("soul", { provider: { get: async () => "You are a helpful assistant." } })
        .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
        .withCachedPrompt();
      await session.replaceContextBlock("memory", "User likes coffee.");
      const system = await session.freezeSystemPrompt();
      const model = memoryWritingModel();
      const result = await generateText({
        model,
        system,
        prompt: "Remember: I prefer dark roast.",
        tools: await session.tools(),
        stopWhen: stepCountIs(3),
      });
      assert.equal(result.text, "Noted!");
      const toolResult = result.steps[0]?.toolResults[0];
      assert.equal(toolResult?.output, "Written to memory. Usage: 1% (11/1100 tokens)");
      assert.equal(
        session.getContextBlock("memory")?.content,
        "User likes coffee.\nUser prefers dark roast.",
      );
      assert.equal(await session.freezeSystemPrompt(), system);
      assert.ok(!system.includes("dark roast"));
      const refreshed = await session.refreshSystemPrompt();
      assert.ok(refreshed.includes("User prefers dark roast."));
      const firstCall = model.doGenerateCalls[0]!;
      assert.equal(firstCall.prompt[0]?.role, "system");
      assert.deepEqual(
        firstCall.tools?.map((t) => t.name),
        ["set_context"],
      );
    });
  });
}
