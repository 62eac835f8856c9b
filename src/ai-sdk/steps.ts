import type { StepResult, ToolSet } from "ai";
import type { SessionMessagePart } from "../contract/message.js";

type Part = SessionMessagePart & Record<string, unknown>;

/**
 * The parts of one assistant `UIMessage` built from `generateText`'s steps, shaped as `toUIMessageStream` would
 * stream them (a `step-start` per step, tool calls with their results or errors), so the page and
 * `convertToModelMessages` read them like a streamed answer.
 */
export function fromSteps<T extends ToolSet>(steps: ReadonlyArray<StepResult<T>>): Part[] {
  const parts: Part[] = [];
  for (const step of steps) {
    parts.push({ type: "step-start" });
    const calls = new Map<string, Part>();
    for (const content of step.content) {
      switch (content.type) {
        case "text":
        case "reasoning":
          if (content.text !== "")
            parts.push(withMeta({ type: content.type, text: content.text, state: "done" }, content));
          break;
        case "source":
          parts.push(
            content.sourceType === "url"
              ? { type: "source-url", sourceId: content.id, url: content.url, title: content.title }
              : {
                  type: "source-document",
                  sourceId: content.id,
                  mediaType: content.mediaType,
                  title: content.title,
                  filename: content.filename,
                },
          );
          break;
        case "file":
          parts.push({
            type: "file",
            mediaType: content.file.mediaType,
            url: `data:${content.file.mediaType};base64,${content.file.base64}`,
          });
          break;
        case "tool-call": {
          const part: Part = {
            type: content.dynamic ? "dynamic-tool" : `tool-${content.toolName}`,
            ...(content.dynamic ? { toolName: content.toolName } : {}),
            toolCallId: content.toolCallId,
            state: "input-available",
            input: content.input,
            ...(content.providerExecuted ? { providerExecuted: true } : {}),
          };
          calls.set(content.toolCallId, part);
          parts.push(part);
          break;
        }
        case "tool-result":
          Object.assign(calls.get(content.toolCallId) ?? {}, {
            state: "output-available",
            output: content.output,
          });
          break;
        case "tool-error":
          Object.assign(calls.get(content.toolCallId) ?? {}, {
            state: "output-error",
            errorText: String(content.error instanceof Error ? content.error.message : content.error),
          });
          break;
        case "tool-approval-request":
          Object.assign(calls.get(content.toolCall.toolCallId) ?? {}, {
            state: "approval-requested",
            approval: { id: content.approvalId },
          });
          break;
      }
    }
  }
  return parts;
}

function withMeta(part: Part, content: { providerMetadata?: unknown }): Part {
  return content.providerMetadata === undefined
    ? part
    : { ...part, providerMetadata: content.providerMetadata };
}
