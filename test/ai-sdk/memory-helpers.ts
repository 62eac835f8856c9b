// Mock models for the memory middleware's tests: a generating one scripted like scriptedModel (which streams),
// and a compact view of what a model call was given.
import { MockLanguageModelV3 } from "ai/test";
import type { SessionMessage } from "../../src/index.js";
import type { ScriptedStep } from "../agent/helpers/mock-model.js";

type CallOptions = Parameters<MockLanguageModelV3["doGenerate"]>[0];
type GenerateResult = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;

/** A MockLanguageModelV3 whose doGenerate answers call i with step i of the script. */
export function generatingModel(
  script: (index: number) => ScriptedStep,
  onCall?: (index: number) => void | Promise<void>,
): MockLanguageModelV3 {
  let index = 0;
  return new MockLanguageModelV3({
    provider: "mock",
    modelId: "generating",
    doGenerate: async (): Promise<GenerateResult> => {
      const current = index++;
      await onCall?.(current);
      const step = script(current);
      if (step.error) throw new Error(step.error);
      const content: GenerateResult["content"] = [];
      if (step.reasoning) content.push({ type: "reasoning", text: step.reasoning });
      if (step.text) content.push({ type: "text", text: step.text });
      for (const call of step.toolCalls ?? []) {
        content.push({
          type: "tool-call",
          toolCallId: call.id,
          toolName: call.name,
          input: JSON.stringify(call.input),
        });
      }
      const finish = step.toolCalls?.length ? "tool-calls" : "stop";
      return {
        content,
        finishReason: { unified: finish, raw: finish },
        usage: {
          inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 5, text: 5, reasoning: 0 },
        },
        warnings: [],
      };
    },
  });
}

/** A call's prompt as `role: text` lines (tool calls and results by id), for compact assertions. */
export function lines(options: CallOptions | undefined): string[] {
  return (options?.prompt ?? []).map((message) => {
    if (typeof message.content === "string") return `${message.role}: ${message.content}`;
    const bits = message.content.map((part) => {
      if (part.type === "text") return part.text;
      if (part.type === "tool-call") return `call ${part.toolCallId} ${JSON.stringify(part.input)}`;
      if (part.type === "tool-result") return `result ${part.toolCallId} ${JSON.stringify(part.output)}`;
      return part.type;
    });
    return `${message.role}: ${bits.join(" | ")}`;
  });
}

/** Stored messages as `role: text` lines (text parts, tool parts by type and state). */
export function storedLines(messages: SessionMessage[]): string[] {
  return messages.map((message) => {
    const bits = message.parts.map((part) =>
      part.type === "text" ? String(part.text) : `${part.type}:${String(part.state)}`,
    );
    return `${message.role}: ${bits.join(" | ")}`;
  });
}
