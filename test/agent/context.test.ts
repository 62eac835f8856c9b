import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ModelMessage } from "ai";
import { transcript } from "../../src/agent/compaction.js";
import { modelContext, sanitize } from "../../src/agent/context.js";
import { closeInterruptedTurn, pendingToolCalls } from "../../src/agent/repair.js";
import type { AgentMessage } from "../../src/agent/types.js";

const call = (id: string): ModelMessage => ({
  role: "assistant",
  content: [{ type: "tool-call", toolCallId: id, toolName: "t", input: {} }],
});
const result = (id: string): ModelMessage => ({
  role: "tool",
  content: [{ type: "tool-result", toolCallId: id, toolName: "t", output: { type: "text", value: id } }],
});
const user = (text: string): ModelMessage => ({ role: "user", content: text });

describe("model context", () => {
  it("answers a call left unanswered in the middle of history and drops results without a call", () => {
    const out = sanitize([user("a"), call("c1"), user("b"), result("orphan"), call("c2"), result("c2")]);
    assert.deepEqual(
      out.map((m) => m.role),
      ["user", "assistant", "tool", "user", "assistant", "tool"],
    );
    const idAt = (i: number) => (out[i]!.content as { toolCallId: string }[])[0]?.toolCallId;
    assert.equal(idAt(2), "c1");
    assert.equal(idAt(5), "c2");
  });

  it("leaves provider-executed calls alone (their results live in the assistant message)", () => {
    const hosted: ModelMessage = {
      role: "assistant",
      content: [
        { type: "tool-call", toolCallId: "w", toolName: "web_search", input: {}, providerExecuted: true },
      ],
    };
    assert.deepEqual(sanitize([user("a"), hosted]), [user("a"), hosted]);
    assert.deepEqual(pendingToolCalls([user("a"), hosted]), []);
  });

  it("strips agent-session's fields before the call", () => {
    const stored: AgentMessage = {
      id: "x",
      createdAt: 1,
      role: "user",
      content: "hi",
      metadata: { turn: 1 },
    };
    assert.deepEqual(modelContext([stored]).messages, [{ role: "user", content: "hi" }]);
  });

  it("closes an interrupted turn with results for its pending calls, then a note", () => {
    const stored = [user("go"), call("c1")].map(
      (m, i) => ({ ...m, id: `m${i}`, createdAt: i }) as AgentMessage,
    );
    const closing = closeInterruptedTurn(stored, 1, "test");
    assert.deepEqual(
      closing.map((m) => [m.role, m.metadata?.synthetic]),
      [
        ["tool", "missing-tool-result"],
        ["assistant", "interrupted"],
      ],
    );
  });
});

describe("compaction transcript", () => {
  it("shows inline media in tool results as a placeholder, so what the tool said beside it is kept", () => {
    const base64 = Buffer.alloc(3000, 5).toString("base64");
    const shot: ModelMessage = {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "c1",
          toolName: "screenshot",
          output: {
            type: "content",
            value: [
              { type: "image-data", data: base64, mediaType: "image/png" },
              { type: "text", text: "the login page shows an error" },
            ],
          },
        },
      ],
    };
    assert.equal(
      transcript([shot as AgentMessage]),
      'screenshot returned: [{"type":"image-data","data":"[image/png omitted: 4000 chars]","mediaType":"image/png"},' +
        '{"type":"text","text":"the login page shows an error"}]',
    );
  });
});
