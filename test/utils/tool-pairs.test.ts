import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SessionMessage } from "../../src/contract/message.js";
import { sanitizeToolPairs } from "../../src/utils/tool-pairs.js";
import { ids, snapshot, text, toolCall } from "./fixtures.js";

const STUB_TEXT = "[Result from earlier conversation — see context summary above]";

function legacyCall(id: string, callId: string, toolName = "lookup"): SessionMessage {
  return {
    id,
    role: "assistant",
    parts: [{ type: "tool-call", toolCallId: callId, toolName, input: { q: 1 } }],
  };
}

function legacyResult(id: string, callId: string, role = "tool"): SessionMessage {
  return { id, role, parts: [{ type: "tool-result", toolCallId: callId, toolName: "lookup", result: "ok" }] };
}

describe("sanitizeToolPairs", () => {
  test("complete AI SDK histories come back unchanged, message by message", () => {
    const messages = [text("u1", "hi"), toolCall("a1", { ok: 1 }), text("a2", "done", "assistant")];
    const result = sanitizeToolPairs(messages);
    assert.deepEqual(ids(result), ["u1", "a1", "a2"]);
    for (const [i, message] of result.entries()) assert.equal(message, messages[i]);
  });

  test("drops results whose call is gone, and messages left without parts", () => {
    const messages = [
      text("u1", "summary follows"),
      legacyResult("r1", "gone"),
      {
        id: "mixed",
        role: "tool",
        parts: [
          { type: "tool-result", toolCallId: "gone", result: "x" },
          { type: "text", text: "kept" },
        ],
      },
    ];
    const before = snapshot(messages);
    const result = sanitizeToolPairs(messages);
    assert.deepEqual(ids(result), ["u1", "mixed"]);
    assert.deepEqual(result[1]?.parts, [{ type: "text", text: "kept" }]);
    assert.equal(snapshot(messages), before, "input not mutated");
  });

  test("a call that lost its result gets one stub right after it", () => {
    const messages = [legacyCall("a1", "c1", "weather"), text("u2", "next")];
    const result = sanitizeToolPairs(messages);
    assert.deepEqual(ids(result), ["a1", "stub-c1", "u2"]);
    const stub = result[1];
    assert.equal(stub?.role, "assistant");
    assert.ok(stub?.createdAt instanceof Date);
    assert.deepEqual(stub?.parts, [
      { type: "tool-result", toolCallId: "c1", toolName: "weather", result: STUB_TEXT },
    ]);
  });

  test("recognises static tool-<name>, dynamic-tool and nested v4 tool-invocation calls", () => {
    const messages: SessionMessage[] = [
      toolCall("static", undefined, "search", "c-static"),
      {
        id: "dynamic",
        role: "assistant",
        parts: [
          { type: "dynamic-tool", toolName: "mcp_fetch", toolCallId: "c-dyn", state: "input-available" },
        ],
      },
      {
        id: "v4",
        role: "assistant",
        parts: [
          {
            type: "tool-invocation",
            toolInvocation: { state: "call", toolCallId: "c-v4", toolName: "calc", args: {} },
          },
        ],
      },
    ];
    const result = sanitizeToolPairs(messages);
    assert.deepEqual(ids(result), ["static", "stub-c-static", "dynamic", "stub-c-dyn", "v4", "stub-c-v4"]);
    assert.equal(result[1]?.parts[0]?.toolName, "search");
    assert.equal(result[3]?.parts[0]?.toolName, "mcp_fetch");
    assert.equal(result[5]?.parts[0]?.toolName, "calc");
  });

  test("answered calls need no stub: outputs, errors, denials, legacy results", () => {
    const messages: SessionMessage[] = [
      toolCall("ok", { fine: true }),
      {
        id: "err",
        role: "assistant",
        parts: [{ type: "tool-x", toolCallId: "c-err", state: "output-error", errorText: "boom" }],
      },
      {
        id: "denied",
        role: "assistant",
        parts: [{ type: "tool-x", toolCallId: "c-den", state: "output-denied" }],
      },
      {
        id: "v4",
        role: "assistant",
        parts: [
          { type: "tool-invocation", toolInvocation: { state: "result", toolCallId: "c4", result: 1 } },
        ],
      },
      legacyCall("call", "c5"),
      legacyResult("result", "c5"),
    ];
    const result = sanitizeToolPairs(messages);
    assert.deepEqual(ids(result), ["ok", "err", "denied", "v4", "call", "result"]);
    for (const [i, message] of result.entries()) assert.equal(message, messages[i]);
  });

  test("is idempotent and stubs a call id only once", () => {
    const messages = [legacyCall("a1", "c1"), legacyCall("a2", "c1"), text("u", "q")];
    const once = sanitizeToolPairs(messages);
    assert.deepEqual(ids(once), ["a1", "stub-c1", "a2", "u"]);
    const twice = sanitizeToolPairs(once);
    assert.deepEqual(ids(twice), ids(once));
  });

  test("results answered by a call in a non-assistant message are orphans", () => {
    const messages = [
      { id: "user-tool", role: "user", parts: [{ type: "tool-x", toolCallId: "c", output: 1 }] },
      text("u", "q"),
    ];
    assert.deepEqual(ids(sanitizeToolPairs(messages)), ["u"]);
  });

  test("messages without parts are dropped", () => {
    const messages = [{ id: "empty", role: "user", parts: [] }, text("u", "q")];
    assert.deepEqual(ids(sanitizeToolPairs(messages)), ["u"]);
  });
});
