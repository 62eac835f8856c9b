// The memory middleware's recall (query words, the character budget's marker) and a file's bytes kept across calls.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { generateText, wrapLanguageModel } from "ai";
import { sessionMemory } from "../../src/ai-sdk/index.js";
import { RECALL_QUERY_WORDS, recallQuery, recallSection } from "../../src/ai-sdk/memory-recall.js";
import { type SearchHit, Session, SqliteStore } from "../../src/index.js";
import { generatingModel, lines } from "./memory-helpers.js";

const hit = (id: string, content: string, rank: number): SearchHit => ({
  id,
  role: "user",
  content,
  createdAt: "2026-01-01T00:00:00.000Z",
  sessionId: "s",
  score: 1,
  rank,
});

describe("memory recall", () => {
  test("the query is the latest user message's longest distinct words, at most the search's share", () => {
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`);
    const query = recallQuery([
      { role: "user", content: [{ type: "text", text: "an older question" }] },
      { role: "user", content: [{ type: "text", text: `"${words.join(" ")}" -OR- ${words[0]}` }] },
    ]);
    assert.equal(query?.split(" ").length, RECALL_QUERY_WORDS);
    assert.doesNotMatch(query!, /["-]/, "no query syntax survives");
    assert.equal(recallQuery([{ role: "tool", content: [] }]), null, "a tool step asks nothing");
  });

  test("hits past the character budget are cut with a marker and counted, never dropped silently", () => {
    const settings = { limit: 5, maxChars: 40, scope: "session" as const };
    const hits = [hit("a", "short", 1), hit("b", "x".repeat(100), 2), hit("c", "never shown", 3)];
    const section = recallSection(hits, new Set(), settings, "s")!;
    const body = section.split("\n").slice(1);
    assert.deepEqual(body[0], '1. user at 2026-01-01T00:00:00.000Z: "short"');
    assert.match(body[1]!, /^2\. user at \S+: "x{32}… \[69 more characters cut\]$/);
    assert.equal(body[2], "(1 more recalled messages left out: the recall budget is 40 characters)");
    assert.equal(
      recallSection(hits, new Set(["a", "b", "c"]), settings, "s"),
      null,
      "hits in the prompt skip",
    );
  });

  test("a long message still recalls (a search refuses more than 32 distinct words)", async () => {
    const store = new SqliteStore(":memory:");
    const model = generatingModel(() => ({ text: "ok" }));
    const middleware = sessionMemory({ store, sessionId: "long", history: { maxMessages: 2 }, recall: true });
    const memory = wrapLanguageModel({ model, middleware });
    await generateText({ model: memory, prompt: "The zeppelin hangar is in Friedrichshafen." });
    await generateText({ model: memory, prompt: "Filler turn." });
    const long = `${Array.from({ length: 50 }, (_, i) => `filler${i}`).join(" ")} zeppelin Friedrichshafen`;
    await generateText({ model: memory, prompt: long });
    assert.match(lines(model.doGenerateCalls[2])[0]!, /"The zeppelin hangar is in Friedrichshafen\."/);
  });
});

test("a file's bytes are stored as base64 and given back to the next call", async () => {
  const store = new SqliteStore(":memory:");
  const model = generatingModel(() => ({ text: "a small image" }));
  const memory = wrapLanguageModel({ model, middleware: sessionMemory({ store, sessionId: "files" }) });
  const bytes = new Uint8Array([137, 80, 78, 71, 1, 2, 3]);
  await generateText({
    model: memory,
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image", image: bytes, mediaType: "image/png" },
        ],
      },
    ],
  });
  await generateText({ model: memory, prompt: "And again?" });
  const first = model.doGenerateCalls[1]!.prompt[0]!;
  assert.equal(first.role, "user");
  const file = (first.content as Array<{ type: string; data?: unknown; mediaType?: string }>)[1]!;
  assert.deepEqual(
    { type: file.type, mediaType: file.mediaType, data: file.data },
    { type: "file", mediaType: "image/png", data: Buffer.from(bytes).toString("base64") },
  );
  const stored = await Session.create(store).forSession("files").getHistory();
  assert.equal(stored[0]!.parts[1]!.type, "file");
});
