import type { UserContent, UserModelMessage } from "ai";
import { errorMessage, SessionError } from "../errors.js";
import { toJson } from "./codec.js";

/** What `send()` accepts: text, an AI SDK user ModelMessage, or a UIMessage-style `{ role: "user", parts }`. */
export type SendInput =
  | string
  | UserModelMessage
  | { role: "user"; parts: Array<{ type: string; text?: string; url?: string; mediaType?: string }> };

function invalid(reason: string): SessionError {
  return new SessionError("INVALID_MESSAGE", `send() ${reason}`);
}

function fromParts(parts: unknown[]): UserContent {
  return parts.map((part, index) => {
    const p = part as {
      type?: unknown;
      text?: unknown;
      url?: unknown;
      mediaType?: unknown;
      filename?: unknown;
    };
    if (p?.type === "text" && typeof p.text === "string") return { type: "text" as const, text: p.text };
    if (p?.type === "file" && typeof p.url === "string" && typeof p.mediaType === "string") {
      return {
        type: "file" as const,
        data: p.url,
        mediaType: p.mediaType,
        ...(typeof p.filename === "string" ? { filename: p.filename } : {}),
      };
    }
    throw invalid(`got an unsupported part at index ${index}: only "text" and "file" parts can be sent`);
  });
}

/** The user message `send()` stores, validated; throws `INVALID_MESSAGE` with what is wrong. */
export function toUserMessage(input: unknown): UserModelMessage {
  if (typeof input === "string") {
    if (input.trim().length === 0) throw invalid("needs non-empty text");
    return { role: "user", content: input };
  }
  if (typeof input !== "object" || input === null) throw invalid("needs text or a user message");
  const message = input as { role?: unknown; content?: unknown; parts?: unknown; providerOptions?: unknown };
  if (message.role !== "user") {
    throw invalid(`only sends user messages, got role ${JSON.stringify(message.role)}`);
  }
  let content: UserContent;
  if (typeof message.content === "string") content = message.content;
  else if (Array.isArray(message.content)) {
    for (const [index, part] of message.content.entries()) {
      if (typeof (part as { type?: unknown })?.type !== "string")
        throw invalid(`got a content part without a type at ${index}`);
    }
    content = message.content as UserContent;
  } else if (Array.isArray(message.parts)) content = fromParts(message.parts);
  else throw invalid("needs a user message with `content` (ModelMessage) or `parts` (UIMessage)");
  if (content.length === 0) throw invalid("needs a non-empty message");
  const out: UserModelMessage = { role: "user", content };
  if (message.providerOptions !== undefined) out.providerOptions = message.providerOptions as never;
  // A cycle or a throwing toJSON would otherwise surface as a TypeError from the storage, after the turn was claimed.
  try {
    toJson(out);
  } catch (error) {
    throw invalid(`got a message that cannot be stored as JSON: ${errorMessage(error)}`);
  }
  return out;
}
