import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SessionMessage } from "../../src/contract/message.js";
import { estimateMessageTokens } from "../../src/message/tokens.js";
import {
  alignBoundaryBackward,
  alignBoundaryForward,
  buildSummaryPrompt,
  type CompactCounterInput,
  computeSummaryBudget,
  createCompactFunction,
  findTailCutByTokens,
} from "../../src/utils/compaction-helpers.js";
import { ids, overlay, snapshot, text, toolCall } from "./fixtures.js";

/** Deterministic summariser that records the prompts it was given. */
function fakeSummarizer(reply = "## Topic\nA summary") {
  const prompts: string[] = [];
  return {
    prompts,
    summarize: async (prompt: string) => {
      prompts.push(prompt);
      return reply;
    },
  };
}

function conversation(count: number): SessionMessage[] {
  return Array.from({ length: count }, (_, i) => text(`m${i}`, `message ${i}`, i % 2 ? "assistant" : "user"));
}

/** Three plain messages, five assistant tool messages with big-ish outputs, then a short exchange. */
function toolHeavy(): SessionMessage[] {
  return [
    text("u0", "please inspect the repo"),
    text("a1", "sure", "assistant"),
    text("u2", "start with the logs"),
    ...[3, 4, 5, 6, 7].map((i) => toolCall(`t${i}`, { log: `line ${i} `.repeat(50) })),
    text("u8", "thanks"),
    text("a9", "you're welcome", "assistant"),
  ];
}

/** A legacy pair: an assistant call message followed by a separate result message. */
function legacyPair(callIndex: number, callId: string): SessionMessage[] {
  return [
    {
      id: `call${callIndex}`,
      role: "assistant",
      parts: [{ type: "tool-call", toolCallId: callId, toolName: "t" }],
    },
    {
      id: `result${callIndex}`,
      role: "tool",
      parts: [{ type: "tool-result", toolCallId: callId, result: 1 }],
    },
  ];
}

describe("createCompactFunction", () => {
  test("null when n <= protectHead + minTailMessages; the summariser is not called", async () => {
    const fake = fakeSummarizer();
    const compact = createCompactFunction({ summarize: fake.summarize });
    assert.equal(await compact(conversation(5)), null);
    assert.equal(fake.prompts.length, 0);
  });

  test("compacts the middle when there are enough messages and the tail budget is small", async () => {
    const fake = fakeSummarizer();
    const compact = createCompactFunction({ summarize: fake.summarize, tailTokenBudget: 10 });
    const messages = conversation(10);
    const before = snapshot(messages);
    const result = await compact(messages);
    // Head m0..m2 protected; the tail keeps m8, m9 (minTailMessages 2, budget 10 tokens ≈ one message).
    assert.deepEqual(result, { fromMessageId: "m3", toMessageId: "m7", summary: "## Topic\nA summary" });
    assert.equal(fake.prompts.length, 1);
    assert.match(fake.prompts[0] ?? "", /CONVERSATION TO SUMMARIZE:/);
    assert.equal(snapshot(messages), before);
  });

  test("a roomy tail budget leaves nothing to compact (default 20000 tokens)", async () => {
    const compact = createCompactFunction({ summarize: fakeSummarizer().summarize });
    assert.equal(await compact(conversation(12)), null);
  });

  test("heuristic under-count on a tool-heavy history → null", async () => {
    const fake = fakeSummarizer();
    const compact = createCompactFunction({ summarize: fake.summarize });
    assert.ok(estimateMessageTokens(toolHeavy()) < 20_000);
    assert.equal(await compact(toolHeavy()), null);
    assert.equal(fake.prompts.length, 0);
  });

  test("explicit per-message counter → compacts from the first tool message", async () => {
    const seen: string[][] = [];
    const compact = createCompactFunction({
      summarize: fakeSummarizer().summarize,
      tokenCounter: (messages) => {
        seen.push(ids(messages));
        return 5000;
      },
    });
    const result = await compact(toolHeavy());
    assert.deepEqual(result && [result.fromMessageId, result.toMessageId], ["t3", "t5"]);
    assert.ok(
      seen.every((batch) => batch.length === 1),
      "counted one message at a time",
    );
    assert.deepEqual(seen.flat(), ["a9", "u8", "t7", "t6", "t5"], "stops counting once the budget is spent");
  });

  test("the Session-flowed counter works too (one message, empty prompt, no blocks), async", async () => {
    const inputs: CompactCounterInput[] = [];
    const compact = createCompactFunction({ summarize: fakeSummarizer().summarize });
    const result = await compact(toolHeavy(), {
      tokenCounter: async (input) => {
        inputs.push(input);
        return 5000;
      },
    });
    assert.deepEqual(result && [result.fromMessageId, result.toMessageId], ["t3", "t5"]);
    assert.ok(inputs.every((input) => input.messages.length === 1 && input.systemPrompt === ""));
    assert.ok(
      inputs.every((input) => Array.isArray(input.contextBlocks) && input.contextBlocks.length === 0),
    );
  });

  test("the explicit counter wins over the Session's", async () => {
    let sessionCalls = 0;
    const compact = createCompactFunction({
      summarize: fakeSummarizer().summarize,
      tokenCounter: () => 5000,
    });
    await compact(toolHeavy(), {
      tokenCounter: () => {
        sessionCalls++;
        return 0;
      },
    });
    assert.equal(sessionCalls, 0);
  });

  test("a non-finite count counts as 0 → no compaction", async () => {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, undefined]) {
      const compact = createCompactFunction({
        summarize: fakeSummarizer().summarize,
        tokenCounter: () => value as number,
      });
      assert.equal(await compact(toolHeavy()), null, String(value));
    }
  });

  test("iterative: the previous summary is the text of the first compaction_ message, never an endpoint", async () => {
    const fake = fakeSummarizer();
    const compact = createCompactFunction({ summarize: fake.summarize, tailTokenBudget: 10 });
    const messages = [
      ...conversation(3),
      overlay("first", "Earlier summary A"),
      text("m4", "four"),
      overlay("second", "Later summary B"),
      text("m6", "six", "assistant"),
      text("m7", "seven"),
      text("m8", "eight", "assistant"),
      text("m9", "nine"),
    ];
    const result = await compact(messages);
    assert.deepEqual(result && [result.fromMessageId, result.toMessageId], ["m4", "m7"]);
    const prompt = fake.prompts[0] ?? "";
    assert.match(prompt, /PREVIOUS SUMMARY:\nEarlier summary A\n/);
    assert.match(prompt, /NEW TURNS TO INCORPORATE:/);
    assert.doesNotMatch(prompt, /CONVERSATION TO SUMMARIZE:/);
    assert.doesNotMatch(prompt, /Later summary B/, "overlays in the range are not re-rendered as turns");
  });

  test("a previous summary in the protected head is still used", async () => {
    const fake = fakeSummarizer();
    const compact = createCompactFunction({ summarize: fake.summarize, tailTokenBudget: 10 });
    await compact([overlay("c", "Head summary\nsecond line"), ...conversation(8).slice(1)]);
    assert.match(fake.prompts[0] ?? "", /PREVIOUS SUMMARY:\nHead summary\nsecond line\n/);
  });

  test("null when the middle holds only overlays", async () => {
    const compact = createCompactFunction({ summarize: fakeSummarizer().summarize, tailTokenBudget: 0 });
    const messages = [...conversation(3), overlay("x", "s"), text("m4", "a"), text("m5", "b")];
    assert.equal(await compact(messages), null);
  });

  test("a blank summary is null (as in the reference); a throwing summariser rejects", async () => {
    const blank = createCompactFunction({ summarize: async () => "  \n\t", tailTokenBudget: 10 });
    assert.equal(await blank(conversation(10)), null);
    const failing = createCompactFunction({
      summarize: async () => {
        throw new Error("model down");
      },
      tailTokenBudget: 10,
    });
    await assert.rejects(failing(conversation(10)), /model down/);
    const broken = createCompactFunction({
      summarize: async () => undefined as unknown as string,
      tailTokenBudget: 10,
    });
    await assert.rejects(broken(conversation(10)), TypeError);
  });

  test("plan() says what would be compacted without calling the model", async () => {
    let calls = 0;
    const compact = createCompactFunction({
      summarize: async () => {
        calls++;
        return "summary";
      },
      tailTokenBudget: 10,
    });
    const planned = await compact.plan(conversation(10));
    const result = await compact(conversation(10));
    assert.equal(calls, 1);
    assert.equal(planned?.fromMessageId, result?.fromMessageId);
    assert.equal(planned?.toMessageId, result?.toMessageId);
    assert.ok((planned?.middle.length ?? 0) > 0);
    assert.equal(await compact.plan(conversation(4)), null);
  });

  test("a throwing counter rejects", async () => {
    const compact = createCompactFunction({
      summarize: fakeSummarizer().summarize,
      tokenCounter: () => {
        throw new Error("tokenizer failed");
      },
    });
    await assert.rejects(compact(toolHeavy()), /tokenizer failed/);
  });

  test("options: protectHead and minTailMessages", async () => {
    const compact = createCompactFunction({
      summarize: fakeSummarizer().summarize,
      protectHead: 1,
      minTailMessages: 4,
      tailTokenBudget: 0,
    });
    const result = await compact(conversation(10));
    assert.deepEqual(result && [result.fromMessageId, result.toMessageId], ["m1", "m5"]);
    assert.throws(() => createCompactFunction({} as never), TypeError);
  });

  test("the start boundary moves past results of a call in the head", async () => {
    const messages = [
      text("u0", "go"),
      text("a1", "ok", "assistant"),
      ...legacyPair(2, "c2"), // call2 at index 2, result2 at index 3
      ...conversation(6).map((m) => ({ ...m, id: `x${m.id}` })),
    ];
    const compact = createCompactFunction({ summarize: fakeSummarizer().summarize, tailTokenBudget: 0 });
    const result = await compact(messages);
    assert.equal(result?.fromMessageId, "xm0");
  });
});

describe("boundary helpers", () => {
  const messages = [text("u0", "q"), ...legacyPair(1, "c1"), text("u3", "next"), ...legacyPair(4, "c4")];
  // indexes: 0 u0, 1 call1, 2 result1, 3 u3, 4 call4, 5 result5

  test("alignBoundaryForward skips results of the call just before the boundary", () => {
    assert.equal(alignBoundaryForward(messages, 2), 3);
    assert.equal(alignBoundaryForward(messages, 3), 3);
    assert.equal(alignBoundaryForward(messages, 5), 6);
    assert.equal(alignBoundaryForward(messages, 0), 0);
    assert.equal(alignBoundaryForward(messages, 99), 99);
  });

  test("alignBoundaryBackward keeps a call with its results", () => {
    assert.equal(alignBoundaryBackward(messages, 2), 1);
    assert.equal(alignBoundaryBackward(messages, 5), 4);
    assert.equal(alignBoundaryBackward(messages, 1), 1);
    assert.equal(alignBoundaryBackward(messages, 3), 3);
    assert.equal(alignBoundaryBackward(messages, 0), 0);
  });

  test("AI SDK parts hold call and result together, so alignment leaves them alone", () => {
    const sdk = [text("u", "q"), toolCall("a", { ok: 1 }), toolCall("b", { ok: 2 }), text("u2", "q")];
    assert.equal(alignBoundaryForward(sdk, 2), 2);
    assert.equal(alignBoundaryBackward(sdk, 2), 2);
  });

  test("findTailCutByTokens: budget, at least one message, minTailMessages floor, alignment", () => {
    const ten = conversation(10);
    assert.equal(findTailCutByTokens(ten, 3, 0, 0), 9, "always keeps one message even over budget");
    assert.equal(findTailCutByTokens(ten, 3, 0, 2), 8);
    assert.equal(findTailCutByTokens(ten, 3, 20_000, 2), 3);
    assert.equal(findTailCutByTokens(ten, 3, 10, 0), 9);
    assert.equal(findTailCutByTokens(ten, 3, 14, 0), 8, "two messages of 7 tokens fit 14");
    assert.equal(findTailCutByTokens(ten, 9, 0, 5), 9, "the floor is ignored when it reaches into the head");
    assert.equal(findTailCutByTokens(messages, 1, 0, 1), 4, "a cut on a result moves back to its call");
  });
});

describe("summary prompt", () => {
  test("computeSummaryBudget: a fifth of the heuristic, at least 100", () => {
    assert.equal(computeSummaryBudget([]), 100);
    const big = [text("a", "x".repeat(40_000))];
    assert.equal(computeSummaryBudget(big), Math.floor((4 + 10_000) * 0.2));
  });

  test("renders roles, texts and tools; object outputs as JSON, never [object Object]", () => {
    const messages: SessionMessage[] = [
      text("u", "What is in the file?"),
      {
        id: "a",
        role: "assistant",
        parts: [
          { type: "reasoning", text: "hidden thoughts" },
          { type: "text", text: "Let me look." },
          { type: "text", text: "Reading now." },
          {
            type: "tool-read",
            toolCallId: "c1",
            state: "output-available",
            input: { path: "/a.txt" },
            output: { lines: ["one", "two"], total: 2 },
          },
          {
            type: "dynamic-tool",
            toolName: "mcp_search",
            toolCallId: "c2",
            state: "output-error",
            input: "plain",
            errorText: "timeout",
          },
          { type: "tool-big", toolCallId: "c3", state: "output-available", output: "o".repeat(2000) },
        ],
      },
    ];
    const prompt = buildSummaryPrompt(messages, null, 321);
    assert.ok(
      prompt.includes(
        [
          "[user]",
          "What is in the file?",
          "",
          "---",
          "",
          "[assistant]",
          "Let me look.",
          "Reading now.",
          "[Tool: read]",
          'Input: {"path":"/a.txt"}',
          'Output: {"lines":["one","two"],"total":2}',
          "[Tool: mcp_search]",
          'Input: "plain"',
          "Error: timeout",
          "[Tool: big]",
          `Output: ${"o".repeat(500)}`,
        ].join("\n"),
      ),
      prompt,
    );
    assert.doesNotMatch(prompt, /\[object Object\]/);
    assert.doesNotMatch(prompt, /hidden thoughts/);
    assert.match(prompt, /~321 tokens/);
    for (const section of ["## Topic", "## Key Points", "## Current State", "## Open Items"]) {
      assert.ok(prompt.includes(section), section);
    }
  });

  test("inline media in tool data shows as a placeholder, so what the tool said beside it is kept", () => {
    const base64 = Buffer.alloc(3000, 9).toString("base64");
    const output = {
      type: "content",
      value: [
        { type: "image-data", data: base64, mediaType: "image/png" },
        { type: "text", text: "the login page shows an error" },
      ],
    };
    const input = { image: `data:image/jpeg;base64,${base64}` };
    const prompt = buildSummaryPrompt(
      [toolCall("a", output, "shot")].map((m) => ({
        ...m,
        parts: m.parts.map((p) => ({ ...p, input })),
      })),
      null,
      100,
    );
    assert.ok(
      prompt.includes(
        [
          "[Tool: shot]",
          'Input: {"image":"[image/jpeg omitted: 4023 chars]"}',
          'Output: {"type":"content","value":[{"type":"image-data","data":"[image/png omitted: 4000 chars]","mediaType":"image/png"},{"type":"text","text":"the login page shows an error"}]}',
        ].join("\n"),
      ),
      prompt,
    );
    assert.ok(!prompt.includes(base64.slice(0, 40)), "no base64 in the prompt");
  });

  test("first vs iterative variants", () => {
    const turns = [text("u", "hello")];
    const first = buildSummaryPrompt(turns, null, 100);
    assert.match(first, /CONVERSATION TO SUMMARIZE:\n\[user\]\nhello/);
    assert.doesNotMatch(first, /PREVIOUS SUMMARY/);
    assert.equal(buildSummaryPrompt(turns, "   ", 100), first, "a blank previous summary is no summary");
    const update = buildSummaryPrompt(turns, "Old facts", 100);
    assert.match(update, /PREVIOUS SUMMARY:\nOld facts\n\nNEW TURNS TO INCORPORATE:\n\[user\]\nhello/);
  });

  test("legacy tool parts render their args and results (top level or nested v4 invocation)", () => {
    const prompt = buildSummaryPrompt(
      [
        {
          id: "a",
          role: "assistant",
          parts: [
            { type: "tool-call", toolCallId: "c1", toolName: "lookup", args: { q: "x" } },
            { type: "tool-result", toolCallId: "c1", toolName: "lookup", result: { hits: 3 } },
            {
              type: "tool-invocation",
              toolInvocation: {
                state: "result",
                toolCallId: "c2",
                toolName: "calc",
                args: { a: 1 },
                result: 2,
              },
            },
          ],
        },
      ],
      null,
      100,
    );
    assert.ok(
      prompt.includes(
        '[Tool: lookup]\nInput: {"q":"x"}\n[Tool: lookup]\nOutput: {"hits":3}\n[Tool: calc]\nInput: {"a":1}\nOutput: 2',
      ),
      prompt,
    );
  });

  test("unserialisable tool data renders without throwing", () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const prompt = buildSummaryPrompt(
      [
        {
          id: "a",
          role: "assistant",
          parts: [{ type: "tool-x", toolCallId: "c", input: circular, output: 12n }],
        },
      ],
      null,
      100,
    );
    assert.match(prompt, /\[Tool: x\]\nInput: \[object Object\]\nOutput: 12/);
  });
});
