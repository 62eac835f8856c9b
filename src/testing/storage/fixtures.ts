import type { AgentMessage, SessionState, UsageEntry } from "../../agent/types.js";
import { sumUsage } from "../../agent/usage.js";

let counter = 0;

/** A message of each shape a session stores. */
export function sampleMessages(prefix = "m"): AgentMessage[] {
  const at = 1_700_000_000_000;
  return [
    {
      id: `${prefix}1`,
      createdAt: at,
      role: "user",
      content: 'Hello ✓ \u0000 "quotes"\nnew line',
      metadata: { turn: 1 },
    },
    {
      id: `${prefix}2`,
      createdAt: at + 1,
      role: "assistant",
      content: [
        { type: "reasoning", text: "thinking", providerOptions: { anthropic: { signature: "sig" } } },
        { type: "text", text: "Let me check." },
        {
          type: "tool-call",
          toolCallId: "call-1",
          toolName: "weather",
          input: { city: "Paris", days: [1, 2] },
        },
      ],
      metadata: { turn: 1, step: 0, finishReason: "tool-calls" },
    },
    {
      id: `${prefix}3`,
      createdAt: at + 2,
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call-1",
          toolName: "weather",
          output: { type: "json", value: { t: 21.5 } },
        },
      ],
      metadata: { turn: 1, step: 0 },
    },
    {
      id: `${prefix}4`,
      createdAt: at + 3,
      role: "user",
      content: [
        { type: "text", text: "and this?" },
        { type: "file", data: "aGVsbG8=", mediaType: "text/plain" },
      ],
    },
  ];
}

/** A ledger entry. */
export function entry(turn: number, input = 100, output = 20, extra: Partial<UsageEntry> = {}): UsageEntry {
  return {
    kind: "step",
    turn,
    step: 0,
    model: "mock:model",
    at: 1_700_000_000_000 + turn,
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: 10,
    cacheWriteTokens: 5,
    reasoningTokens: 0,
    ...extra,
  };
}

/** A complete state with a fresh id. */
export function sampleState(overrides: Partial<SessionState> = {}): SessionState {
  const entries = [entry(1), entry(2, 50, 5, { costUsd: 0.25 })];
  return {
    id: `s-${process.pid}-${++counter}`,
    messages: sampleMessages(),
    usage: { ...sumUsage(entries), entries },
    metadata: { title: "Sample", nested: { a: [1, 2] } },
    createdAt: 1_700_000_000_000 + counter,
    updatedAt: 1_700_000_000_500 + counter,
    ...overrides,
  };
}
