import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SessionMessage } from "../../src/contract/message.js";
import {
  CHARS_PER_TOKEN,
  estimateMessageTokens,
  estimateStringTokens,
  IMAGE_TOKENS,
  MEDIA_TOKEN_CAP,
  TOKENS_PER_MESSAGE,
  WORDS_TOKEN_MULTIPLIER,
} from "../../src/message/tokens.js";
import { offloadMessage } from "../../src/store/media/offload.js";
import { text, toolCall } from "./fixtures.js";

/** The reference formula, with the allocating word count, to compare the fast version against. */
function referenceEstimate(value: string): number {
  if (!value) return 0;
  const words = value.split(/\s+/).filter(Boolean).length;
  return Math.ceil(Math.max(value.length / 4, words * 1.3));
}

describe("estimateStringTokens", () => {
  test("constants", () => {
    assert.equal(CHARS_PER_TOKEN, 4);
    assert.equal(WORDS_TOKEN_MULTIPLIER, 1.3);
    assert.equal(TOKENS_PER_MESSAGE, 4);
  });

  test("documented examples", () => {
    assert.equal(estimateStringTokens(""), 0);
    assert.equal(estimateStringTokens("Hello world"), 3);
    assert.equal(estimateStringTokens("x".repeat(400)), 100);
    assert.equal(estimateStringTokens("a b c d e"), 7); // words win: ceil(5 × 1.3)
    assert.equal(estimateStringTokens("   "), 1); // length 3/4 → 1, no words
  });

  test("word count agrees with split(/\\s+/) on every whitespace kind", () => {
    const alphabet = [
      "a",
      "é",
      "😀",
      "-",
      " ",
      "\t",
      "\n",
      "\r",
      "\v",
      "\f",
      "\u00a0",
      "\u1680",
      "\u2000",
      "\u200a",
      "\u200b", // zero-width space is NOT whitespace for \s
      "\u2028",
      "\u2029",
      "\u202f",
      "\u205f",
      "\u3000",
      "\ufeff",
      "\u0085", // NEL is NOT whitespace for \s
    ];
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    for (let round = 0; round < 2000; round++) {
      let sample = "";
      const length = random() % 40;
      for (let i = 0; i < length; i++) sample += alphabet[random() % alphabet.length];
      assert.equal(estimateStringTokens(sample), referenceEstimate(sample), JSON.stringify(sample));
    }
  });

  test("a non-string never throws", () => {
    assert.equal(estimateStringTokens(undefined as unknown as string), 0);
    assert.equal(estimateStringTokens(12345678 as unknown as string), 2);
  });
});

describe("estimateMessageTokens", () => {
  test("4 per message plus text parts", () => {
    assert.equal(estimateMessageTokens([]), 0);
    assert.equal(estimateMessageTokens([text("a", "Hello world")]), 4 + 3);
    assert.equal(
      estimateMessageTokens([text("a", "Hello world"), text("b", "x".repeat(400))]),
      4 + 3 + 4 + 100,
    );
  });

  test("reasoning parts count (text or legacy reasoning field)", () => {
    const message: SessionMessage = {
      id: "r",
      role: "assistant",
      parts: [
        { type: "reasoning", text: "x".repeat(40) },
        { type: "reasoning", reasoning: "y".repeat(80) },
      ],
    };
    assert.equal(estimateMessageTokens([message]), 4 + 10 + 20);
  });

  test("tool parts count input plus output, or the legacy result", () => {
    const output = { rows: "z".repeat(100) };
    const staticTool = toolCall("t", output);
    const expected =
      4 +
      estimateStringTokens(JSON.stringify(staticTool.parts[0]?.input)) +
      estimateStringTokens(JSON.stringify(output));
    assert.equal(estimateMessageTokens([staticTool]), expected);

    const dynamic: SessionMessage = {
      id: "d",
      role: "assistant",
      parts: [{ type: "dynamic-tool", toolName: "x", toolCallId: "c", input: "abcd", result: "efgh" }],
    };
    assert.equal(estimateMessageTokens([dynamic]), 4 + 2 + 2); // one word each: ceil(1.3)

    const legacy: SessionMessage = {
      id: "l",
      role: "assistant",
      parts: [
        { type: "tool-invocation", toolCallId: "c", input: null, output: undefined, result: "x".repeat(8) },
      ],
    };
    assert.equal(estimateMessageTokens([legacy]), 4 + 2);
  });

  test("other parts count their text, else their result; null and undefined count 0", () => {
    const message: SessionMessage = {
      id: "o",
      role: "assistant",
      parts: [
        { type: "source-url", text: "x".repeat(8), result: "ignored because text is defined" },
        { type: "data-x", result: { a: 1 } }, // {"a":1} → 7 chars → 2
        { type: "step-start" },
        { type: "text", text: null as unknown as string },
      ],
    };
    assert.equal(estimateMessageTokens([message]), 4 + 2 + 2);
  });

  test("a tool-heavy history is dominated by its outputs", () => {
    const history = Array.from({ length: 20 }, (_, i) => toolCall(`t${i}`, "o".repeat(4000)));
    const tokens = estimateMessageTokens(history);
    assert.ok(tokens >= 20 * 1000, `expected at least 20000, got ${tokens}`);
  });

  test("never throws: circular, BigInt, hostile and malformed content", () => {
    const circular: Record<string, unknown> = { name: "loop" };
    circular.self = circular;
    const hostile = Object.create(null) as object;
    const messages = [
      {
        id: "c",
        role: "assistant",
        parts: [{ type: "tool-x", toolCallId: "1", input: circular, output: 10n }],
      },
      { id: "h", role: "assistant", parts: [{ type: "tool-y", toolCallId: "2", output: hostile }] },
      { id: "n", role: "user", parts: [null, 5, "str", { type: 7 }] },
      { id: "p", role: "user", parts: "not an array" },
      null,
    ] as unknown as SessionMessage[];
    const tokens = estimateMessageTokens(messages);
    assert.ok(Number.isFinite(tokens) && tokens >= 16);
    assert.equal(estimateMessageTokens(undefined as unknown as SessionMessage[]), 0);
  });

  // A hang guard, not a timing assertion (see truncate.test.ts).
  test("counts long text in one pass", { timeout: 60_000 }, () => {
    const long = "word ".repeat(2_000_000);
    assert.equal(estimateStringTokens(long), 2_600_000); // words (2M × 1.3) beat characters (10M / 4)
  });
});

describe("media in token estimates", () => {
  const b64 = Buffer.alloc(300_000, 7).toString("base64");
  const image = (url: string) =>
    ({
      id: "i",
      role: "user",
      parts: [{ type: "file", mediaType: "image/png", url }],
    }) as unknown as SessionMessage;
  const tool = (data: string, mediaType: string) =>
    ({
      id: "t",
      role: "assistant",
      parts: [
        {
          type: "tool-shot",
          toolCallId: "c",
          state: "output-available",
          input: {},
          output: { type: "content", value: [{ type: "media", data, mediaType }] },
        },
      ],
    }) as unknown as SessionMessage;

  test("an image counts a fixed weight, inline or offloaded", () => {
    const inline = image(`data:image/png;base64,${b64}`);
    assert.equal(estimateMessageTokens([inline]), TOKENS_PER_MESSAGE + IMAGE_TOKENS);
    const stored = offloadMessage(inline, JSON.stringify(inline));
    assert.equal(estimateMessageTokens([JSON.parse(stored.content)]), TOKENS_PER_MESSAGE + IMAGE_TOKENS);
  });

  test("other media counts by size, capped, and a pointer estimates like its payload", () => {
    const small = Buffer.alloc(6000, 1).toString("base64");
    for (const data of [small, b64]) {
      const inline = tool(data, "application/pdf");
      const stored = JSON.parse(offloadMessage(inline, JSON.stringify(inline)).content) as SessionMessage;
      assert.equal(estimateMessageTokens([stored]), estimateMessageTokens([inline]));
    }
    const big = estimateMessageTokens([tool(b64, "application/pdf")]);
    assert.ok(big <= MEDIA_TOKEN_CAP + 100 && big >= MEDIA_TOKEN_CAP, `capped: ${big}`);
    const screenshot = estimateMessageTokens([tool(b64, "image/png")]);
    assert.ok(screenshot < IMAGE_TOKENS + 100, `an image in a tool output is an image: ${screenshot}`);
  });
});
