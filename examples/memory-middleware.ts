/**
 * AI SDK memory middleware: a model wrapped with `sessionMemory` remembers the conversation on its own.
 *
 *   node --import tsx examples/memory-middleware.ts [path.db]      (default ./agent-session-memory.db)
 *
 * A mock model stands in for a provider (swap in `anthropic(...)` or `openai(...)`: nothing else changes), and it
 * answers with what it was given, so the output shows the stored history reaching each call. Run it twice: the
 * second run continues the conversation the first stored in the SQLite file.
 */
import { generateText, simulateReadableStream, streamText, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { sessionMemory } from "../src/ai-sdk/index.js";
import { Session, SqliteStore } from "../src/index.js";

const path = process.argv[2] ?? "./agent-session-memory.db";
const store = new SqliteStore(path);

type CallOptions = Parameters<MockLanguageModelV3["doGenerate"]>[0];

/** What the mock "says": how many messages it was given and the user messages among them. */
function echo(options: CallOptions): string {
  const users = options.prompt.flatMap((message) =>
    message.role === "user"
      ? message.content.flatMap((part) => (part.type === "text" ? [JSON.stringify(part.text)] : []))
      : [],
  );
  return `I was given ${options.prompt.length} messages; you said ${users.join(", ")}.`;
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
const model = new MockLanguageModelV3({
  doGenerate: async (options) => ({
    content: [{ type: "text", text: echo(options) }],
    finishReason: { unified: "stop", raw: "stop" },
    usage,
    warnings: [],
  }),
  doStream: async (options) => ({
    stream: simulateReadableStream({
      chunks: [
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: echo(options) },
        { type: "text-end", id: "t" },
        { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
      ],
    }),
  }),
});

// One middleware per conversation: the app passes only the new message, the memory adds the rest.
const memory = wrapLanguageModel({
  model,
  middleware: sessionMemory({ store, sessionId: "memory-demo", history: { maxMessages: 20 }, recall: true }),
});

const first = await generateText({
  model: memory,
  system: "Be brief.",
  prompt: "My favourite colour is teal.",
});
console.log(`generateText → ${first.text}`);
const second = streamText({ model: memory, system: "Be brief.", prompt: "Which colour did I name?" });
console.log(`streamText   → ${await second.text}`);

const stored = await Session.create(store).forSession("memory-demo").getHistory();
console.log(`\n${path} holds ${stored.length} messages of "memory-demo":`);
for (const message of stored) {
  const text = message.parts.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join(" ");
  console.log(`  ${message.role.padEnd(9)} ${text}`);
}
await store.close();
