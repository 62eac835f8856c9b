import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SessionMessage } from "../../src/contract/message.js";
import { enforceRowSizeLimit, ROW_MAX_BYTES } from "../../src/utils/row-size.js";
import { snapshot, text, toolCall } from "./fixtures.js";

function bytes(message: SessionMessage): number {
  return Buffer.byteLength(JSON.stringify(message), "utf8");
}

describe("enforceRowSizeLimit", () => {
  test("the default limit is ROW_MAX_BYTES UTF-8 bytes: a message of exactly that is kept, one byte more is not", () => {
    const frame = bytes(text("u", ""));
    // Two-byte characters: the limit counts UTF-8 bytes of the JSON, not characters.
    const fill =
      "é".repeat(Math.floor((ROW_MAX_BYTES - frame) / 2)) + "x".repeat((ROW_MAX_BYTES - frame) % 2);
    const atLimit = text("u", fill);
    assert.equal(bytes(atLimit), ROW_MAX_BYTES);
    assert.equal(enforceRowSizeLimit(atLimit), atLimit, "a message at the limit is returned as is");
    const over = text("u", `${fill}x`);
    const shrunk = enforceRowSizeLimit(over);
    assert.notEqual(shrunk, over);
    assert.ok(bytes(shrunk) <= ROW_MAX_BYTES);
    assert.deepEqual(shrunk.metadata, { compactedTextParts: [0] });
    assert.deepEqual(enforceRowSizeLimit(over, ROW_MAX_BYTES), shrunk, "the default is that limit");
  });

  test("a message within the limit is returned as is", () => {
    const message = toolCall("t", { content: "x".repeat(100_000) });
    assert.equal(enforceRowSizeLimit(message), message);
    assert.equal(enforceRowSizeLimit(text("u", "y".repeat(1_700_000))).parts[0]?.text?.length, 1_700_000);
  });

  test("a 2 MB field keeps the object shape and marks the tool call", () => {
    const output = { path: "/big.log", content: "x".repeat(2_000_000), lines: 42 };
    const message: SessionMessage = {
      ...toolCall("a1", output, "read", "call-1"),
      metadata: { model: "m1", usage: { tokens: 5 } },
    };
    message.parts.unshift({ type: "text", text: "Here is the file." });
    const before = snapshot(message);
    const result = enforceRowSizeLimit(message);
    assert.ok(bytes(result) <= ROW_MAX_BYTES);
    assert.notEqual(result, message);
    const kept = result.parts[1]?.output as Record<string, unknown>;
    assert.deepEqual(Object.keys(kept), ["path", "content", "lines"]);
    assert.equal(kept.path, "/big.log");
    assert.equal(kept.lines, 42);
    assert.match(String(kept.content), /\[truncated 2000000 chars\]$/);
    assert.ok(JSON.stringify(kept).length <= 1000);
    assert.equal(result.parts[0], message.parts[0], "untouched parts keep identity");
    assert.deepEqual(result.metadata, {
      model: "m1",
      usage: { tokens: 5 },
      compactedToolOutputs: ["call-1"],
    });
    assert.equal(snapshot(message), before, "input not mutated");
  });

  // A hang guard, not a timing assertion (see truncate.test.ts).
  test("a 140k-key object falls back to a __truncated marker and ends under the limit", {
    timeout: 60_000,
  }, () => {
    const output = Object.fromEntries(
      Array.from({ length: 140_000 }, (_, i) => [`key_${i}`, `value number ${i}`]),
    );
    const message = toolCall("wide", output, "scan", "call-wide");
    assert.ok(bytes(message) > ROW_MAX_BYTES);
    const result = enforceRowSizeLimit(message);
    assert.ok(bytes(result) <= ROW_MAX_BYTES);
    const marker = result.parts[0]?.output as Record<string, unknown>;
    assert.equal(marker.__truncated, true);
    assert.equal(marker.__truncatedChars, JSON.stringify(output).length);
    assert.deepEqual((result.metadata as Record<string, unknown>).compactedToolOutputs, ["call-wide"]);
  });

  test("a single 5 MB string: as a tool output it stays a short string, as text it becomes a marker", () => {
    const huge = "é".repeat(5_000_000);
    const tool = enforceRowSizeLimit(toolCall("t", huge));
    assert.ok(bytes(tool) <= ROW_MAX_BYTES);
    assert.equal(typeof tool.parts[0]?.output, "string");
    assert.ok(String(tool.parts[0]?.output).length <= 1000);

    const user = enforceRowSizeLimit(text("u", huge));
    assert.ok(bytes(user) <= ROW_MAX_BYTES);
    assert.equal(
      user.parts[0]?.text,
      `[Text truncated for storage (5000000 chars). First 500 chars: ${"é".repeat(500)}...]`,
    );
    assert.deepEqual(user.metadata, { compactedTextParts: [0] });
  });

  test("text parts are truncated oldest first, only until the message fits", () => {
    const message: SessionMessage = {
      id: "a",
      role: "assistant",
      parts: [
        { type: "text", text: "short" },
        { type: "text", text: "1".repeat(800_000) },
        { type: "text", text: "2".repeat(800_000) },
        { type: "text", text: "3".repeat(800_000) },
      ],
    };
    const result = enforceRowSizeLimit(message);
    assert.ok(bytes(result) <= ROW_MAX_BYTES);
    assert.deepEqual(result.metadata, { compactedTextParts: [1] });
    assert.equal(result.parts[0], message.parts[0]);
    assert.match(result.parts[1]?.text ?? "", /^\[Text truncated for storage \(800000 chars\)/);
    assert.equal(result.parts[2], message.parts[2]);
    assert.equal(result.parts[3], message.parts[3]);
  });

  test("assistant: tool outputs first, then text when still over, both marked", () => {
    const message: SessionMessage = {
      id: "a",
      role: "assistant",
      metadata: { compactedToolOutputs: ["earlier"] },
      parts: [
        { type: "text", text: "t".repeat(1_900_000) },
        ...toolCall("x", { data: "d".repeat(50_000) }, "fetch", "call-x").parts,
      ],
    };
    const result = enforceRowSizeLimit(message);
    assert.ok(bytes(result) <= ROW_MAX_BYTES);
    assert.deepEqual(result.metadata, {
      compactedToolOutputs: ["earlier", "call-x"],
      compactedTextParts: [0],
    });
  });

  test("non-assistant messages only get text truncation", () => {
    const message: SessionMessage = {
      id: "u",
      role: "user",
      parts: [
        { type: "text", text: "u".repeat(1_000_000) },
        ...toolCall("y", { data: "d".repeat(1_000_000) }).parts,
      ],
    };
    const result = enforceRowSizeLimit(message);
    assert.equal(result.parts[1], message.parts[1]);
    assert.deepEqual(result.metadata, { compactedTextParts: [0] });
    assert.ok(bytes(result) <= ROW_MAX_BYTES);
  });

  test("custom limit, and content it may not touch leaves it as small as it can", () => {
    const message: SessionMessage = {
      id: "a",
      role: "assistant",
      parts: [
        { type: "text", text: "z".repeat(5000) },
        { type: "tool-run", toolCallId: "c", state: "input-available", input: { script: "s".repeat(5000) } },
      ],
    };
    const result = enforceRowSizeLimit(message, 2000);
    assert.match(result.parts[0]?.text ?? "", /^\[Text truncated for storage \(5000 chars\)/);
    assert.equal(result.parts[1], message.parts[1], "tool inputs are never rewritten");
    assert.ok(bytes(result) > 2000);
    assert.throws(() => enforceRowSizeLimit(message, Number.NaN), RangeError);
  });

  test("metadata that is not an object is kept and left unmarked", () => {
    const message: SessionMessage = { ...text("u", "q".repeat(3000)), metadata: "opaque" };
    const result = enforceRowSizeLimit(message, 1000);
    assert.equal(result.metadata, "opaque");
    assert.ok(bytes(result) <= 1000);
  });

  test("an unserialisable message is returned untouched instead of throwing", () => {
    const message = { ...text("u", "x"), extra: 10n } as SessionMessage;
    assert.equal(enforceRowSizeLimit(message, 10), message);
  });
});
