/**
 * Anthropic's memory tool (`memory_20250818`) with its /memories directory stored in agent-session.
 *
 *   node --import tsx examples/memory-tool.ts                 (a scripted mock model, no API key needed)
 *   ANTHROPIC_API_KEY=… node --import tsx examples/memory-tool.ts   (Claude)
 *
 * The tool is declared by @ai-sdk/anthropic (`npm i @ai-sdk/anthropic`: 4 with ai@7, 3 with ai@6) either way.
 *
 * The files live in ./memory-tool-example.db (one block per owner); run it twice and the second run finds
 * what the first one wrote.
 */
import { anthropic } from "@ai-sdk/anthropic";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { memoryFilesContext, memoryTool } from "../src/ai-sdk/index.js";
import { Session, SqliteStore } from "../src/index.js";

const store = new SqliteStore(process.env.MEMORY_TOOL_DB ?? "./memory-tool-example.db");
const memory = memoryTool({ store, owner: "user-42" });

const model = process.env.ANTHROPIC_API_KEY ? anthropic("claude-sonnet-4-5") : mock();
// The provider's own declaration of the tool, our execute.
const memoryToolDefinition = anthropic.tools.memory_20250818({ execute: memory.execute });

// The files can also sit in the frozen system prompt, read-only, so the model sees them without a `view`.
const session = Session.create(store)
  .forSession(`memory-example-${Date.now()}`)
  .withContext("memories", { provider: memoryFilesContext({ store, owner: "user-42" }) })
  .withCachedPrompt();

const result = await generateText({
  model,
  system: await session.freezeSystemPrompt(),
  prompt: "I switched from dark roast to espresso. Please remember that.",
  tools: { memory: memoryToolDefinition },
  stopWhen: stepCountIs(8),
});
for (const step of result.steps) {
  for (const call of step.toolResults) {
    console.log(`memory ${JSON.stringify(call.input)}\n→ ${String(call.output).replaceAll("\n", "\n  ")}\n`);
  }
}
console.log(`model: ${result.text}\n`);
console.log("stored files:", Object.fromEntries(await memory.files()));
await session.close();
await store.close();

/** A scripted model that makes the calls Claude would, then answers. */
function mock() {
  const script = [
    { command: "view", path: "/memories" },
    { command: "create", path: "/memories/preferences.md", file_text: "coffee: dark roast\n" },
    { command: "str_replace", path: "/memories/preferences.md", old_str: "dark roast", new_str: "espresso" },
    { command: "view", path: "/memories/preferences.md" },
  ];
  let call = 0;
  const usage = {
    inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 5, text: 5, reasoning: 0 },
  };
  const model = new MockLanguageModelV3({
    doGenerate: async () => {
      const input = script[call++];
      return input
        ? {
            content: [
              { type: "tool-call", toolCallId: `c${call}`, toolName: "memory", input: JSON.stringify(input) },
            ],
            finishReason: { unified: "tool-calls", raw: "tool_use" },
            usage,
            warnings: [],
          }
        : {
            content: [{ type: "text", text: "Noted: espresso from now on." }],
            finishReason: { unified: "stop", raw: "end_turn" },
            usage,
            warnings: [],
          };
    },
  });
  return model;
}
