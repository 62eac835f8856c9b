import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SessionMessage } from "../../src/contract/message.js";
import { truncateOlderMessages, truncateToolOutput } from "../../src/utils/truncate.js";
import { snapshot, text, toolCall } from "./fixtures.js";

function firstOutput(message: SessionMessage | undefined): unknown {
  return message?.parts[0]?.output;
}

describe("truncateOlderMessages", () => {
  test("older object tool outputs keep their shape with [truncated in long fields; input not mutated", () => {
    const large = "x".repeat(1000);
    const messages = [
      toolCall("old-tool", { path: "/large.txt", content: large, totalLines: 1 }),
      text("old-user", "next"),
      text("recent-1", "recent one"),
      text("recent-2", "recent two"),
    ];
    const before = snapshot(messages);
    const result = truncateOlderMessages(messages, { keepRecent: 2, maxToolOutputChars: 100 });
    const output = firstOutput(result[0]) as { path: string; content: string; totalLines: number };
    assert.equal(typeof output, "object");
    assert.equal(output.path, "/large.txt");
    assert.equal(output.totalLines, 1);
    // Cut twice (child share, then a quarter of the budget), still reporting the length the tool returned.
    assert.match(output.content, /\[truncated 1000 chars/);
    assert.ok(output.content.length < large.length);
    assert.ok(JSON.stringify(output).length <= 100);
    assert.equal(snapshot(messages), before);
    assert.notEqual(result[0], messages[0]);
    assert.notEqual(result[0]?.parts[0], messages[0]?.parts[0]);
  });

  test("nested arrays under a small budget become a one-element __truncated marker list", () => {
    const numbers = () => Array.from({ length: 1000 }, (_, i) => i);
    const output = {
      a: numbers(),
      b: numbers(),
      c: numbers(),
      d: numbers(),
      e: numbers(),
      f: numbers(),
      g: numbers(),
    };
    const messages = [toolCall("old", output), text("r1", "recent one"), text("r2", "recent two")];
    const result = truncateOlderMessages(messages, { keepRecent: 2, maxToolOutputChars: 500 });
    const truncated = firstOutput(result[0]) as Record<string, unknown[]>;
    assert.deepEqual(Object.keys(truncated), ["a", "b", "c", "d", "e", "f", "g"]);
    assert.equal(truncated.a?.length, 1);
    assert.deepEqual(truncated.a?.[0], {
      __truncated: true,
      __truncatedChars: JSON.stringify(numbers()).length,
    });
    assert.ok(JSON.stringify(truncated).length <= 500);
  });

  test("recent outputs are untouched and string outputs stay strings", () => {
    const recentOutput = { path: "/recent.txt", content: "y".repeat(1000) };
    const messages = [toolCall("old", "z".repeat(1000)), text("mid", "m"), toolCall("recent", recentOutput)];
    const result = truncateOlderMessages(messages, { keepRecent: 1, maxToolOutputChars: 100 });
    assert.equal(result[2], messages[2]);
    assert.equal(firstOutput(result[2]), recentOutput);
    const old = firstOutput(result[0]);
    assert.equal(typeof old, "string");
    assert.equal((old as string).length, 100);
    assert.match(old as string, /^z+\.\.\. \[truncated 1000 chars\]$/);
  });

  test("returns the same array when there are at most keepRecent messages", () => {
    const messages = [toolCall("a", "z".repeat(5000)), text("b", "q".repeat(20000))];
    assert.equal(truncateOlderMessages(messages), messages);
    assert.equal(truncateOlderMessages(messages, { keepRecent: 2 }), messages);
  });

  test("long text parts of older messages are cut to maxTextChars plus a suffix", () => {
    const messages = [text("old", "q".repeat(200)), text("short", "fine"), text("recent", "r".repeat(200))];
    const result = truncateOlderMessages(messages, { keepRecent: 1, maxTextChars: 50 });
    assert.equal(result[0]?.parts[0]?.text, `${"q".repeat(50)}... [truncated 200 chars]`);
    assert.equal(result[1], messages[1], "an unchanged message keeps its identity");
    assert.equal(result[2], messages[2]);
    assert.equal(messages[0]?.parts[0]?.text, "q".repeat(200));
  });

  test("defaults: keepRecent 4, tool budget 500, text budget 10000", () => {
    const messages = [
      toolCall("t", { body: "b".repeat(2000) }),
      text("long", "l".repeat(12_000)),
      text("ok", "o".repeat(10_000)),
      text("r1", "1"),
      text("r2", "2"),
      text("r3", "3"),
      toolCall("r4", { body: "b".repeat(2000) }),
    ];
    const result = truncateOlderMessages(messages);
    assert.ok(JSON.stringify(firstOutput(result[0])).length <= 500);
    assert.equal(result[1]?.parts[0]?.text?.length, 10_000 + "... [truncated 12000 chars]".length);
    assert.equal(result[2], messages[2]);
    for (let i = 3; i < 7; i++) assert.equal(result[i], messages[i]);
  });

  test("outputs within budget and parts without output keep identity", () => {
    const messages = [
      toolCall("small", { ok: true }),
      toolCall("pending", undefined),
      { id: "odd", role: "user", parts: [{ type: "file", url: "x".repeat(20_000) }] },
      text("recent", "r"),
    ];
    const result = truncateOlderMessages(messages, { keepRecent: 1 });
    for (let i = 0; i < messages.length; i++) assert.equal(result[i], messages[i]);
  });
});

describe("truncateToolOutput (structure-preserving truncator)", () => {
  test("an inline image is never cut into broken base64: the item becomes a text item naming it", () => {
    const base64 = Buffer.alloc(3000, 7).toString("base64");
    const output = {
      type: "content",
      value: [
        { type: "text", text: "screenshot taken" },
        { type: "image-data", data: base64, mediaType: "image/png" },
        { type: "image", data: base64, mimeType: "image/jpeg" },
        { type: "file", url: `data:application/pdf;base64,${base64}` },
      ],
    };
    const { output: result } = truncateToolOutput(output, 500);
    assert.deepEqual(result, {
      type: "content",
      value: [
        { type: "text", text: "screenshot taken" },
        { type: "text", text: "[image/png omitted: 4000 chars]" },
        { type: "text", text: "[image/jpeg omitted: 4000 chars]" },
        { type: "text", text: "[application/pdf omitted: 4028 chars]" },
      ],
    });
    // An item that fits its budget keeps its payload; a budget too small for the placeholder gets the marker.
    const small = { type: "media", data: "iVBORw0KGgo=", mediaType: "image/png" };
    const kept = truncateToolOutput({ items: [small, "x".repeat(900)] }, 500).output as { items: unknown[] };
    assert.equal(kept.items[0], small);
    const item = output.value[1];
    assert.deepEqual(truncateToolOutput(item, 20).output, {
      __truncated: true,
      __truncatedChars: JSON.stringify(item).length,
    });
  });

  test("within budget: untouched, same reference", () => {
    const output = { a: 1 };
    assert.deepEqual(truncateToolOutput(output, 100), { output, truncated: false, originalLength: 7 });
    assert.equal(truncateToolOutput(output, 100).output, output);
  });

  test("children that fit their share are left whole", () => {
    const output = { keep: "k".repeat(90), cut: "c".repeat(5000) };
    const { output: result } = truncateToolOutput(output, 1000) as { output: Record<string, string> };
    assert.equal(result.keep, output.keep);
    assert.match(result.cut ?? "", /\[truncated 5000 chars\]$/);
  });

  test("arrays drop trailing items and say so when the marker fits", () => {
    const items = Array.from({ length: 10 }, () => "x".repeat(1000));
    const { output } = truncateToolOutput(items, 320);
    assert.ok(Array.isArray(output));
    const list = output as string[];
    assert.ok(JSON.stringify(list).length <= 320);
    assert.equal(list.length, 4);
    assert.match(list[0] ?? "", /^x+\.\.\. \[truncated 1000 chars\]$/);
    assert.match(list[3] ?? "", /^Array output truncated \.\.\. \[truncated \d+ chars\]$/);
  });

  test("arrays collapse to a one-element marker list when the marker does not fit", () => {
    const items = Array.from({ length: 100 }, (_, i) => `item-${i}`);
    const result = truncateToolOutput(items, 400);
    assert.deepEqual(result.output, [
      {
        __truncated: true,
        __truncatedChars: result.originalLength,
        note: "Tool output omitted because it was too large to preserve structurally.",
      },
    ]);
    assert.deepEqual(truncateToolOutput(items, 30).output, ["... [truncated 991 chars]"]);
  });

  test("objects too large to keep structurally become a marker object", () => {
    const output = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`key-${i}`, i]));
    const result = truncateToolOutput(output, 300);
    assert.deepEqual(result.output, {
      __truncated: true,
      __truncatedChars: result.originalLength,
      note: "Tool output omitted because it was too large to preserve structurally.",
    });
    const tiny = truncateToolOutput(output, 60);
    assert.deepEqual(tiny.output, { __truncated: true, __truncatedChars: tiny.originalLength });
  });

  test("the longest string fields are shrunk to a quarter of the budget when the object is still over", () => {
    const output = { a: "a".repeat(5000), b: "b".repeat(5000) };
    const { output: result } = truncateToolOutput(output, 300) as { output: Record<string, string> };
    assert.ok(JSON.stringify(result).length <= 300);
    assert.equal(result.a?.length, 75); // a quarter of 300, reporting the original length
    assert.match(result.a ?? "", /^a+\.\.\. \[truncated 5000 chars\]$/);
    assert.equal(result.b?.length, 150); // the per-child share; shrinking stopped once it fitted
  });

  test("an object that cannot fit even after shrinking becomes the marker", () => {
    const output = {
      text: "t".repeat(5000),
      ...Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`n${i}`, i])),
    };
    const result = truncateToolOutput(output, 300);
    assert.deepEqual(Object.keys(result.output as object), ["__truncated", "__truncatedChars", "note"]);
  });

  test("deep nesting is cut at depth 8; cycles terminate", () => {
    let deep: Record<string, unknown> = { leaf: "x".repeat(2000) };
    for (let i = 0; i < 20; i++) deep = { child: deep };
    const { output } = truncateToolOutput(deep, 2000);
    assert.match(JSON.stringify(output), /Nested output omitted/);

    // A cycle has no JSON; it is measured by String() and must simply not hang or throw.
    const cyclic: Record<string, unknown> = { data: "d".repeat(3000) };
    cyclic.self = cyclic;
    assert.doesNotThrow(() => truncateToolOutput(cyclic, 10));
    const bigint = truncateToolOutput({ n: 10n, s: "s".repeat(3000) }, 10);
    assert.equal(bigint.truncated, true);
  });

  test("keeps a __proto__ key as data and never pollutes prototypes", () => {
    const output = JSON.parse(`{"__proto__": {"polluted": "${"p".repeat(2000)}"}, "x": 1}`) as object;
    const { output: result } = truncateToolOutput(output, 300) as { output: Record<string, unknown> };
    assert.ok(Object.hasOwn(result, "__proto__"));
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
  });

  // A hang guard, not a timing assertion: linear work takes ~1 s even on a loaded machine, a quadratic blow-up
  // minutes (speed is measured by \`npm run bench\`, never asserted).
  test("huge inputs stay bounded: a 140k-key object and a 200k-item array", { timeout: 60_000 }, () => {
    const wide = Object.fromEntries(Array.from({ length: 140_000 }, (_, i) => [`k${i}`, `value-${i}`]));
    const long = Array.from({ length: 200_000 }, (_, i) => ({ i, v: "v".repeat(20) }));
    const a = truncateToolOutput(wide, 1000);
    const b = truncateToolOutput(long, 1000);
    assert.equal((a.output as Record<string, unknown>).__truncated, true);
    assert.ok(JSON.stringify(a.output).length <= 1000);
    assert.ok(Array.isArray(b.output) && JSON.stringify(b.output).length <= 1000);
  });

  test("surrogate pairs are never split", () => {
    const { output } = truncateToolOutput("😀".repeat(100), 50);
    assert.equal(typeof output, "string");
    assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(output as string));
  });
});
