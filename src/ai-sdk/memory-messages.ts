import { normalize } from "../agent/codec.js";
import { fromSessionMessage, toSessionMessage } from "../agent/storage/mapping.js";
import type { AgentMessage } from "../agent/types.js";
import { untaggedData } from "../ai-majors.js";
import type { SessionMessage } from "../contract/message.js";
import { base64Encode } from "../runtime/bytes.js";
import type { Content, Prompt } from "./memory-types.js";
import { chatMessageId } from "./storage.js";

// The memory middleware keeps a call's messages the way the agent runtime keeps its own (agent/storage/mapping.ts):
// readable parts for people, search, the CLI and the viewer, and the exact message under `agent.message`, which
// is what is read back. So a session the agent runtime wrote reads as history here, and the reverse.

type Part = Record<string, unknown> & { type: string };

/** The stored form of one prompt message (JSON-clean: bytes become base64, URLs their href). */
export function toStored(message: Prompt): SessionMessage {
  const exact = normalize({ ...withBase64(message), id: chatMessageId(), createdAt: Date.now() });
  return toSessionMessage(exact as unknown as AgentMessage);
}

/**
 * The message with the bytes of its file parts as base64 (what the provider prompt also takes), encoded here
 * rather than by the codec's Node `Buffer`, which a Worker without Node compatibility does not have.
 */
function withBase64(message: Prompt): Prompt {
  if (typeof message.content === "string") return message;
  const parts = message.content as unknown as Part[];
  if (!parts.some((part) => part.data instanceof Uint8Array)) return message;
  const content = parts.map((part) =>
    part.data instanceof Uint8Array ? { ...part, data: base64Encode(part.data) } : part,
  );
  return { ...message, content } as unknown as Prompt;
}

/**
 * A stored message as a prompt message: the exact message when the memory or the agent runtime wrote it (a
 * ModelMessage's string content, `image` parts and URL strings put back in the provider prompt's form), otherwise
 * the plain text of its text parts (the agent runtime's rule for messages other code wrote). Null when nothing of
 * it can be sent (no content, or a role a prompt cannot hold).
 */
export function toPrompt(stored: SessionMessage): Prompt | null {
  const { role, content } = fromSessionMessage(stored) as { role: string; content: unknown };
  if (role === "system") return typeof content === "string" && content !== "" ? { role, content } : null;
  if (role !== "user" && role !== "assistant" && role !== "tool") return null;
  const parts = (typeof content === "string" ? [{ type: "text", text: content }] : asParts(content))
    .map((part) => promptPart(part, role))
    .filter((part): part is Part => part !== null);
  return parts.length === 0 ? null : ({ role, content: parts } as unknown as Prompt);
}

function asParts(content: unknown): Part[] {
  if (!Array.isArray(content)) return [];
  return content.filter(
    (part): part is Part => part !== null && typeof part === "object" && typeof part.type === "string",
  );
}

/** One part in the provider prompt's form, or null for a part the role cannot hold there. */
function promptPart(part: Part, role: string): Part | null {
  switch (part.type) {
    case "text":
      return typeof part.text === "string" && part.text !== "" && role !== "tool" ? part : null;
    case "image":
    case "file": {
      if (role === "tool") return null;
      const { image, mimeType, ...rest } = part;
      const data = part.type === "image" ? image : part.data;
      const mediaType = String(part.mediaType ?? mimeType ?? (part.type === "image" ? "image/*" : ""));
      return { ...rest, type: "file", mediaType, data: dataContent(data) };
    }
    case "reasoning":
    case "reasoning-file":
    case "tool-call":
      return role === "assistant" ? part : null;
    case "tool-result":
      return role === "assistant" || role === "tool" ? part : null;
    default:
      // Approval parts and kinds of later SDK versions: the stored message keeps them, the prompt leaves them out.
      return null;
  }
}

/** File data as the provider prompt takes it: bytes or base64 as they are, an http(s) address as a URL. */
function dataContent(data: unknown): unknown {
  if (typeof data !== "string") return data;
  if (/^https?:\/\//i.test(data)) return new URL(data);
  const inline = /^data:[^,]*;base64,(.*)$/s.exec(data);
  return inline ? inline[1] : data;
}

/**
 * The assistant message of a model call's content, as the AI SDK puts it in the next step's prompt: text,
 * reasoning, files, tool calls (input parsed) and the results of provider-executed tools; provider metadata goes
 * along as provider options (a reasoning signature must come back). Null when the call produced none of these.
 */
export function answerOf(content: readonly Content[]): Prompt | null {
  const parts: Part[] = [];
  for (const item of content) {
    const options = item.type !== "source" && "providerMetadata" in item ? item.providerMetadata : undefined;
    const extra = options === undefined ? {} : { providerOptions: options };
    switch (item.type) {
      case "text":
      case "reasoning":
        if (item.text !== "") parts.push({ type: item.type, text: item.text, ...extra });
        break;
      case "file":
      case "reasoning-file":
        parts.push({ type: item.type, mediaType: item.mediaType, data: untaggedData(item.data), ...extra });
        break;
      case "tool-call":
        parts.push({
          type: "tool-call",
          toolCallId: item.toolCallId,
          toolName: item.toolName,
          input: parseInput(item.input),
          ...(item.providerExecuted ? { providerExecuted: true } : {}),
          ...extra,
        });
        break;
      case "tool-result":
        parts.push({
          type: "tool-result",
          toolCallId: item.toolCallId,
          toolName: item.toolName,
          output: item.isError
            ? { type: "error-json", value: item.result }
            : { type: "json", value: item.result },
          ...extra,
        });
        break;
    }
  }
  return parts.length === 0 ? null : ({ role: "assistant", content: parts } as unknown as Prompt);
}

// A tool call's input arrives as JSON text; a model that wrote broken JSON keeps its text (the SDK's repair runs
// later, on its own copy).
function parseInput(input: string): unknown {
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

/**
 * What identifies a message when the app's prompt is matched against the stored path: its role, its texts and its
 * tool call ids. Provider options, reasoning and file bytes are left out: the SDK rebuilds a step's messages
 * from the answer, and those may differ in form without being another message.
 */
export function keyOf(message: Prompt): string {
  if (message.role === "system") return `system:${message.content}`;
  const bits = (message.content as unknown as Part[]).map((part) => {
    if (part.type === "text") return `t:${String(part.text)}`;
    if (part.type === "tool-call" || part.type === "tool-result")
      return `${part.type}:${String(part.toolCallId)}`;
    if (part.type === "file") return `f:${String(part.mediaType)}`;
    return "";
  });
  return JSON.stringify([message.role, bits.filter((bit) => bit !== "")]);
}
