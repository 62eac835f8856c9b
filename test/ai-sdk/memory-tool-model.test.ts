// A mock model drives the memory tool through generateText, as Claude does: the tool is named `memory` and
// declared by the AI SDK's Anthropic provider, `anthropic.tools.memory_20250818({ execute })` (a provider tool of
// id `anthropic.memory_20250818`).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { anthropic } from "@ai-sdk/anthropic";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { type MemoryTool, memoryFilesContext, memoryTool } from "../../src/ai-sdk/index.js";
import { MemoryStore, Session, SqliteStore } from "../../src/index.js";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** The memory tool as Claude gets it: @ai-sdk/anthropic's own declaration (4 on ai@7, 3 on ai@6), our execute. */
function anthropicMemoryTool(execute: MemoryTool["execute"]) {
  return anthropic.tools.memory_20250818({ execute });
}

/** A model that makes each step's calls (several at once when a step has several), then answers. */
function scriptedModel(steps: Record<string, unknown>[][]) {
  let call = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const inputs = steps[call++];
      if (!inputs) {
        return {
          content: [{ type: "text", text: "Done." }],
          finishReason: { unified: "stop", raw: "stop" },
          usage,
          warnings: [],
        };
      }
      return {
        content: inputs.map((input, i) => ({
          type: "tool-call" as const,
          toolCallId: `call-${call}-${i}`,
          toolName: "memory",
          input: JSON.stringify(input),
        })),
        finishReason: { unified: "tool-calls", raw: "tool_use" },
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
  describe(`a model using the memory tool through generateText (${name})`, () => {
    test("each command, a hostile path and two parallel edits of one file, answered with the tool's strings", async () => {
      const store = create();
      const memory = memoryTool({ store, owner: "user-42" });
      const model = scriptedModel([
        [{ command: "view", path: "/memories" }],
        [{ command: "create", path: "/memories/prefs.md", file_text: "coffee: dark roast\nteam: platform" }],
        // Two edits of one file in one step: the SDK runs them at once; both must survive.
        [
          { command: "str_replace", path: "/memories/prefs.md", old_str: "dark roast", new_str: "espresso" },
          { command: "insert", path: "/memories/prefs.md", insert_line: 2, insert_text: "editor: vim" },
        ],
        [{ command: "view", path: "/memories/prefs.md" }],
        [{ command: "view", path: "/memories/../../etc/passwd" }],
        [{ command: "rename", old_path: "/memories/prefs.md", new_path: "/memories/user/prefs.md" }],
        [{ command: "delete", path: "/memories/user" }],
      ]);
      const result = await generateText({
        model,
        prompt: "Remember that I now drink espresso and use vim.",
        tools: { memory: anthropicMemoryTool(memory.execute) },
        stopWhen: stepCountIs(10),
      });
      assert.equal(result.text, "Done.");
      const outputs = result.steps.flatMap((step) => step.toolResults.map((r) => r.output));
      assert.deepEqual(outputs, [
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories",
        "File created successfully at: /memories/prefs.md",
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
          "     1\tcoffee: espresso\n     2\tteam: platform",
        "The file /memories/prefs.md has been edited.",
        "Here's the content of /memories/prefs.md with line numbers:\n     1\tcoffee: espresso\n     2\tteam: platform\n     3\teditor: vim",
        'Error: The path /memories/../../etc/passwd is not allowed: it contains a ".." segment',
        "Successfully renamed /memories/prefs.md to /memories/user/prefs.md",
        "Successfully deleted /memories/user",
      ]);
      // The model was offered one provider tool named memory.
      const offered = model.doGenerateCalls[0]?.tools ?? [];
      assert.deepEqual(
        offered.map((t) => ({ type: t.type, name: t.name, id: "id" in t ? t.id : undefined })),
        [{ type: "provider", name: "memory", id: "anthropic.memory_20250818" }],
      );
      assert.equal((await memory.files()).size, 0);
      await store.close();
    });

    test("the files can also be a read-only block of the frozen prompt", async () => {
      const store = create();
      const memory = memoryTool({ store, owner: "user-42" });
      await memory.execute({ command: "create", path: "/memories/prefs.md", file_text: "coffee: espresso" });
      const session = Session.create(store)
        .forSession("chat-1")
        .withContext("memories", { provider: memoryFilesContext({ store, owner: "user-42" }) })
        .withCachedPrompt();
      const system = await session.freezeSystemPrompt();
      assert.match(system, /MEMORIES \[readonly\]/);
      assert.match(system, /\/memories\/prefs\.md\n {5}1\tcoffee: espresso/);
      await session.close();
    });
  });
}
