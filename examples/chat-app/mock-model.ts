// A scripted stand-in for a real model (swap in any AI SDK provider): it streams its answer word by word and,
// asked to "remember" something, calls the session's set_context memory tool first.
import { simulateReadableStream } from "ai";
import { MockLanguageModelV3 } from "ai/test";

type StreamPart =
  Awaited<ReturnType<MockLanguageModelV3["doStream"]>>["stream"] extends ReadableStream<infer P> ? P : never;
type Prompt = Parameters<MockLanguageModelV3["doStream"]>[0]["prompt"];

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

function lastUserText(prompt: Prompt): string {
  const user = prompt.findLast((message) => message.role === "user");
  if (!user || typeof user.content === "string") return "";
  return user.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

function finish(reason: "stop" | "tool-calls"): StreamPart {
  return { type: "finish", finishReason: { unified: reason, raw: reason }, usage };
}

/** The answer to one prompt: a memory-tool call, or text streamed word by word (numbered, so regenerating shows). */
function answer(prompt: Prompt, call: number): StreamPart[] {
  const text = lastUserText(prompt);
  const remember = /remember (.+)/i.exec(text);
  if (remember && prompt.at(-1)?.role !== "tool") {
    const input = JSON.stringify({ label: "memory", content: remember[1], action: "append" });
    return [
      { type: "tool-call", toolCallId: `call-${call}`, toolName: "set_context", input },
      finish("tool-calls"),
    ];
  }
  const reply =
    prompt.at(-1)?.role === "tool"
      ? `Noted (answer ${call}).`
      : /slowly/i.test(text)
        ? `Answer ${call}: ${Array.from({ length: 40 }, (_, i) => `word${i + 1}`).join(" ")}.`
        : `Answer ${call}: you said "${text}".`;
  const words = reply.match(/\S+\s*/g) ?? [];
  return [
    { type: "text-start", id: "t" },
    ...words.map((delta): StreamPart => ({ type: "text-delta", id: "t", delta })),
    { type: "text-end", id: "t" },
    finish("stop"),
  ];
}

/**
 * A model that streams scripted answers with a small delay between chunks; asked to answer "slowly", it streams 40
 * words a tenth of a second apart (time to reload the page in the middle).
 */
export function mockChatModel(): MockLanguageModelV3 {
  let calls = 0;
  const model: MockLanguageModelV3 = new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      // The mock records every call (its whole prompt) in doStreamCalls, for tests; a server under load grew by
      // gigabytes, so only the latest few are kept.
      model.doStreamCalls.splice(0, model.doStreamCalls.length - KEPT_CALLS);
      return {
        stream: simulateReadableStream({
          chunks: [{ type: "stream-start", warnings: [] }, ...answer(prompt, ++calls)],
          chunkDelayInMs: /slowly/i.test(lastUserText(prompt)) ? 100 : 15,
        }),
      };
    },
  });
  return model;
}

/** How many of the latest calls the mock keeps in `doStreamCalls`. */
export const KEPT_CALLS = 10;
