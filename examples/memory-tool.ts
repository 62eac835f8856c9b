/**
 * Anthropic's memory tool (`memory_20250818`) with its /memories directory stored in agent-session.
 *
 *   node --import tsx examples/memory-tool.ts                 (a scripted mock model, no API key needed)
 *   ANTHROPIC_API_KEY=… npm i @ai-sdk/anthropic && node --import tsx examples/memory-tool.ts
 *
 * The files live in ./memory-tool-example.db (one block per owner); run it twice and the second run finds
 * what the first one wrote.
 */
import { generateText, stepCountIs, type Tool, tool, zodSchema } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { memoryFilesContext, memoryTool } from "../src/ai-sdk/index.js";
import { Session, SqliteStore } from "../src/index.js";

const store = new SqliteStore(process.env.MEMORY_TOOL_DB ?? "./memory-tool-example.db");
const memory = memoryTool({ store, owner: "user-42" });

const { model, memoryToolDefinition } = process.env.ANTHROPIC_API_KEY ? await claude() : mock();

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

/** Claude through @ai-sdk/anthropic: the provider's own declaration of the tool, our execute. */
async function claude() {
  const name = "@ai-sdk/anthropic";
  const { anthropic } = (await import(name)) as {
    anthropic: ((id: string) => never) & { tools: { memory_20250818(o: { execute: unknown }): Tool } };
  };
  return {
    model: anthropic("claude-sonnet-4-5"),
    memoryToolDefinition: anthropic.tools.memory_20250818({ execute: memory.execute }),
  };
}

/** A scripted model, and the tool declared as @ai-sdk/anthropic declares it (same id, same input schema). */
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
  const inputSchema = zodSchema(
    z.discriminatedUnion("command", [
      z.object({
        command: z.literal("view"),
        path: z.string(),
        view_range: z.tuple([z.number(), z.number()]).optional(),
      }),
      z.object({ command: z.literal("create"), path: z.string(), file_text: z.string() }),
      z.object({
        command: z.literal("str_replace"),
        path: z.string(),
        old_str: z.string(),
        new_str: z.string(),
      }),
      z.object({
        command: z.literal("insert"),
        path: z.string(),
        insert_line: z.number(),
        insert_text: z.string(),
      }),
      z.object({ command: z.literal("delete"), path: z.string() }),
      z.object({ command: z.literal("rename"), old_path: z.string(), new_path: z.string() }),
    ]),
  );
  const memoryToolDefinition = tool({
    type: "provider",
    id: "anthropic.memory_20250818",
    args: {},
    inputSchema,
    execute: (input) => memory.execute(input),
  });
  return { model, memoryToolDefinition };
}
