import type { UserModelMessage } from "ai";
import type { z } from "zod";
import { errorMessage, SessionError, type SessionIssueRule } from "../errors.js";
import { parseInput } from "../schema/parse.js";
import { toJson } from "./codec.js";
import { sendableContent, uiParts } from "./send-schema.js";

/** What `send()` accepts: text, an AI SDK user ModelMessage, or a UIMessage-style `{ role: "user", parts }`. */
export type SendInput =
  | string
  | UserModelMessage
  | { role: "user"; parts: Array<{ type: string; text?: string; url?: string; mediaType?: string }> };

// Built once: a send() parses its content with one of the two.
const sendableModelContent = sendableContent("data");
const sendableParts = sendableContent("url");

// `path` is the field of the caller's message ("" for the message itself), `rule` the one it broke.
const refuse = (reason: string, path: string, rule: SessionIssueRule) =>
  new SessionError("INVALID_MESSAGE", `send() ${reason}`, { issues: [{ path, rule }] });

/**
 * The user message `send()` stores, validated with the AI SDK's `userModelMessageSchema` (passed in from the
 * loaded `ai` module, an optional peer); throws `INVALID_MESSAGE` with what is wrong.
 */
export function toUserMessage(input: unknown, schema: z.ZodType<UserModelMessage>): UserModelMessage {
  if (typeof input === "string") {
    if (input.trim().length === 0) throw refuse("needs non-empty text", "", "required");
    return { role: "user", content: input };
  }
  if (typeof input !== "object" || input === null) throw refuse("needs text or a user message", "", "type");
  const message = input as { role?: unknown; content?: unknown; parts?: unknown; providerOptions?: unknown };
  if (message.role !== "user") {
    throw refuse(`only sends user messages, got role ${JSON.stringify(message.role)}`, "role", "one_of");
  }
  // First, as the schema walks provider options recursively: a cycle would overflow it, and a cycle or a throwing
  // toJSON would otherwise surface as a TypeError from the storage, after the turn was claimed.
  try {
    toJson(input);
  } catch (error) {
    throw refuse(`got a message that cannot be stored as JSON: ${errorMessage(error)}`, "", "invalid");
  }
  let content: unknown;
  if (message.content !== undefined) content = message.content;
  else if (Array.isArray(message.parts))
    content = parseInput(uiParts, message.parts, { code: "INVALID_MESSAGE", path: "parts" });
  else
    throw refuse(
      "needs a user message with `content` (ModelMessage) or `parts` (UIMessage)",
      "content",
      "required",
    );
  const out = { role: "user", content } as UserModelMessage;
  if (message.providerOptions !== undefined) out.providerOptions = message.providerOptions as never;
  // Validated, not parsed: the schema would drop keys it does not know, and the caller's message is stored as given.
  parseInput(schema, out, { code: "INVALID_MESSAGE", what: "send()" });
  // The AI SDK's schema takes any string as image or file data; data it cannot decode would fail every later call.
  const field = message.content === undefined ? "parts" : "content";
  parseInput(field === "parts" ? sendableParts : sendableModelContent, out.content, {
    code: "INVALID_MESSAGE",
    what: "send()",
    path: field,
  });
  if (out.content.length === 0) throw refuse("needs a non-empty message", field, "required");
  return out;
}
