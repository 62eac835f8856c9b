import assert from "node:assert/strict";
import { test } from "node:test";
import { generateText } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import type { SessionProvider } from "../../src/contract/provider.js";
import { Session, type SessionMessage, SqliteStore } from "../../src/index.js";
import { createCompactFunction } from "../../src/utils/compaction-helpers.js";

const usage = {
  inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 20, text: 20, reasoning: 0 },
};

/** A tool-heavy conversation: each assistant turn calls a tool whose output is an object. */
function toolTurn(i: number): SessionMessage[] {
  return [
    { id: `u${i}`, role: "user", parts: [{ type: "text", text: `Please list the files in folder ${i}` }] },
    {
      id: `a${i}`,
      role: "assistant",
      parts: [
        {
          type: "tool-list_files",
          toolCallId: `call-${i}`,
          state: "output-available",
          input: { folder: `folder-${i}` },
          output: { files: Array.from({ length: 30 }, (_, j) => `file-${i}-${j}.ts`), total: 30 },
        },
        { type: "text", text: `Folder ${i} has 30 files.` },
      ],
    },
  ];
}

test("the AI SDK as summariser over a tool-heavy history; object outputs reach it as JSON", async () => {
  const model = new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: "text", text: "## Topic\nListing folders\n## Key Points\n- 30 files each" }],
      finishReason: { unified: "stop", raw: "stop" },
      usage,
      warnings: [],
    }),
  });
  const session = Session.create(new SqliteStore(":memory:")).onCompaction(
    createCompactFunction({
      summarize: async (prompt) => (await generateText({ model, prompt })).text,
      tailTokenBudget: 400,
    }),
  );
  for (let i = 0; i < 12; i++) for (const message of toolTurn(i)) await session.appendMessage(message);
  const report = await session.compact();
  assert.ok(report && report.tokensAfter < report.tokensBefore);
  const call = model.doGenerateCalls[0]!;
  const prompt = JSON.stringify(call.prompt);
  assert.ok(prompt.includes("[Tool: list_files]"));
  assert.ok(prompt.includes("file-3-0.ts"), "object outputs are rendered as JSON");
  assert.ok(!prompt.includes("[object Object]"));
  const history = await session.getHistory();
  assert.ok(
    history.some((m) => m.id === `compaction_${report.id}` && m.parts[0]?.text?.startsWith("## Topic")),
  );
});

test("deciding whether to auto-compact never reads the history (running totals, O(1) per append)", async () => {
  const store = new SqliteStore(":memory:");
  const inner = store.session("s");
  let historyReads = 0;
  const counting: SessionProvider = Object.assign(Object.create(inner) as SessionProvider, {
    getHistory: async (leaf?: string | null) => {
      historyReads++;
      return inner.getHistory(leaf);
    },
  });
  const session = new Session(counting)
    .withContext("soul", { provider: { get: async () => "You are terse." } })
    .onCompaction(async () => null)
    .compactAfter(1_000_000);
  for (let i = 0; i < 200; i++) {
    await session.appendMessage({
      id: `m${i}`,
      role: "user",
      parts: [{ type: "text", text: `message ${i}` }],
    });
  }
  assert.equal(historyReads, 0);
  assert.ok((await session.estimateTokens()) > 200 * 4);
});
