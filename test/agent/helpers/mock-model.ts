import { simulateReadableStream } from "ai";
import { MockLanguageModelV3 } from "ai/test";

// Derived from the mock rather than imported from @ai-sdk/provider, which is only a transitive dependency.
type LanguageModelV3CallOptions = Parameters<MockLanguageModelV3["doStream"]>[0];
type StreamResult = Awaited<ReturnType<MockLanguageModelV3["doStream"]>>;
type LanguageModelV3StreamPart = StreamResult["stream"] extends ReadableStream<infer P> ? P : never;

/** One scripted model step. */
export interface ScriptedStep {
  /** Streamed word by word. */
  text?: string;
  reasoning?: string;
  toolCalls?: { id: string; name: string; input: unknown }[];
  usage?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number; reasoning?: number };
  /** Default: "tool-calls" when there are tool calls, else "stop". */
  finishReason?: "stop" | "tool-calls" | "length" | "error";
  /** A stream error after the text. */
  error?: string;
  /** The call never answers (the process is killed or the turn interrupted meanwhile). */
  hang?: boolean;
}

/** A MockLanguageModelV3 that answers each call with the next step of a script. */
export interface ScriptedModel extends MockLanguageModelV3 {
  /** Hook run when a call starts (before its answer streams). */
  onCall?: (index: number, options: LanguageModelV3CallOptions) => void | Promise<void>;
}

function chunks(step: ScriptedStep): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: "stream-start", warnings: [] }];
  if (step.reasoning) {
    parts.push(
      { type: "reasoning-start", id: "r" },
      { type: "reasoning-delta", id: "r", delta: step.reasoning },
    );
    parts.push({ type: "reasoning-end", id: "r" });
  }
  if (step.text) {
    parts.push({ type: "text-start", id: "t" });
    for (const word of step.text.match(/\S+\s*/g) ?? [])
      parts.push({ type: "text-delta", id: "t", delta: word });
    parts.push({ type: "text-end", id: "t" });
  }
  for (const call of step.toolCalls ?? []) {
    parts.push({
      type: "tool-call",
      toolCallId: call.id,
      toolName: call.name,
      input: JSON.stringify(call.input),
    });
  }
  if (step.error) {
    parts.push({ type: "error", error: new Error(step.error) });
    return parts;
  }
  const u = step.usage ?? {};
  const input = u.input ?? 10;
  const cacheRead = u.cacheRead ?? 0;
  const cacheWrite = u.cacheWrite ?? 0;
  const finish = step.finishReason ?? (step.toolCalls?.length ? "tool-calls" : "stop");
  parts.push({
    type: "finish",
    finishReason: { unified: finish, raw: finish },
    usage: {
      inputTokens: { total: input, noCache: input - cacheRead - cacheWrite, cacheRead, cacheWrite },
      outputTokens: { total: u.output ?? 5, text: u.output ?? 5, reasoning: u.reasoning ?? 0 },
    },
  });
  return parts;
}

/** A mock model following `script` (a list, or a function of the call index); calls past the end fail. */
export function scriptedModel(script: ScriptedStep[] | ((index: number) => ScriptedStep)): ScriptedModel {
  let index = 0;
  const model: ScriptedModel = new MockLanguageModelV3({
    provider: "mock",
    modelId: "scripted",
    doStream: async (options) => {
      const current = index++;
      await model.onCall?.(current, options);
      const step = typeof script === "function" ? script(current) : script[current];
      if (!step) throw new Error(`The script has no step ${current}`);
      if (step.hang) return new Promise(() => {});
      return { stream: simulateReadableStream({ chunks: chunks(step), chunkDelayInMs: 0 }) };
    },
  });
  return model;
}

/** The prompt messages the model received on call `index`, roles and text only, for compact assertions. */
export function promptOf(model: MockLanguageModelV3, index: number): { role: string; text: string }[] {
  const prompt = model.doStreamCalls[index]?.prompt ?? [];
  return prompt.map((message) => ({
    role: message.role,
    text:
      typeof message.content === "string"
        ? message.content
        : message.content
            .map((part) => {
              if (part.type === "text") return part.text;
              if (part.type === "tool-call") return `call:${part.toolName}`;
              if (part.type === "tool-result") {
                const output = part.output as { type: string; value?: unknown };
                return `result:${part.toolName}:${output.type}:${JSON.stringify(output.value)}`;
              }
              return part.type;
            })
            .join("|"),
  }));
}
