import assert from "node:assert/strict";
import { test } from "node:test";
import type { UIMessage } from "ai";
import { MemoryStore, Session, type SessionMessage } from "../src/index.js";

test("an AI SDK UIMessage is a SessionMessage without a cast, and comes back equal", async () => {
  const ui: UIMessage<{ model: string }> = {
    id: "m1",
    role: "assistant",
    metadata: { model: "gpt" },
    parts: [
      { type: "text", text: "hi", state: "done" },
      { type: "reasoning", text: "because", providerMetadata: { x: { y: 1 } } },
      {
        type: "dynamic-tool",
        toolName: "t",
        toolCallId: "c",
        state: "output-available",
        input: { a: 1 },
        output: [1],
      },
      { type: "source-url", sourceId: "s", url: "https://example.com" },
      { type: "file", mediaType: "text/plain", url: "data:text/plain,hi" },
      { type: "step-start" },
    ],
  };
  const asSession: SessionMessage = ui;
  const session = Session.create(new MemoryStore());
  await session.appendMessage(ui);
  assert.deepEqual(await session.getMessage("m1"), asSession);
  const history: UIMessage[] = (await session.getHistory()) as UIMessage[];
  assert.equal(history[0]?.parts.length, 6);
});
