import assert from "node:assert/strict";
import { test } from "node:test";
import {
  clipHit,
  clipOutput,
  documentPart,
  formatEntryHits,
  joinHits,
  toolOutputLimits,
} from "../../src/context/output.js";
import { formatSessionHits } from "../../src/manager/search-tools.js";

test("results within the limits are the reference's exact strings", () => {
  assert.equal(
    formatEntryHits([
      { key: "a", content: "x" },
      { key: "b", content: "y" },
    ]),
    "[a]\nx\n\n[b]\ny",
  );
  const hit = { id: "m", role: "user", content: "hi", createdAt: "", sessionId: "s", onActivePath: true };
  assert.equal(formatSessionHits([hit, { ...hit, role: "assistant" }]), "[user] hi\n---\n[assistant] hi");
  assert.equal(formatEntryHits([]), null);
  assert.equal(clipOutput("short", 500), "short");
  assert.equal(documentPart("doc", 0, 500), "doc");
});

test("a long hit shows the window around its first match, folded and at a word start", () => {
  const text = `${"a".repeat(5000)} Café crème ${"b".repeat(5000)}`;
  const out = clipHit(text, "cafe", 1000);
  assert.ok(out.length <= 1000, `${out.length}`);
  assert.match(out, /^….*Café crème/s);
  assert.match(out, /\[hit truncated: characters [\d,]+–[\d,]+ of 10,012 shown; search with words/);
  // A word inside another word is not a match: "needle" in "haystackneedle" is skipped.
  const second = clipHit(`haystackneedle ${"c".repeat(5000)} needles ${"d".repeat(5000)}`, "needles", 1000);
  assert.match(second, /c needles d/);
  // Chinese has no spaces between words: a word inside a clause is its match, found by its first pair.
  const chinese = clipHit(`${"天".repeat(5000)}我喜欢吃苹果${"地".repeat(5000)}`, "你喜欢苹果吗", 1000);
  assert.match(chinese, /^…天+我喜欢吃苹果地+…/s);
  // No match (e.g. the hit matched on its key): the start is shown.
  assert.match(clipHit("e".repeat(3000), "zebra", 1000), /^eee/);
});

test("never cuts a surrogate pair; whole hits while they fit, then a count of the rest", () => {
  const emoji = "😀".repeat(2000);
  for (const out of [clipHit(emoji, "x", 777), clipOutput(emoji, 777), documentPart(emoji, 301, 777)]) {
    assert.ok(out.length <= 777);
    assert.doesNotMatch(out, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  }
  const joined = joinHits(["x".repeat(380), "y".repeat(380), "z".repeat(380)], "\n\n", 1000);
  assert.ok(joined.length <= 1000);
  assert.match(joined, /^x+\n\ny+\n\n\[output truncated: 2 of 3 results shown \(limit 1,000 characters\)/);
  const first = joinHits(["x".repeat(3000)], "\n\n", 1000);
  assert.ok(first.length <= 1000);
});

test("limits are validated and merged over a base", () => {
  assert.deepEqual(toolOutputLimits({ maxHitChars: 600 }), { maxHitChars: 600, maxOutputChars: 32000 });
  assert.deepEqual(toolOutputLimits({ maxOutputChars: 900 }, { maxHitChars: 600, maxOutputChars: 700 }), {
    maxHitChars: 600,
    maxOutputChars: 900,
  });
  assert.throws(() => toolOutputLimits({ maxHitChars: 0 }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => toolOutputLimits("big" as never), { code: "INVALID_ARGUMENT" });
});
