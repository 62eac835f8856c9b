/** The body `persistChatTurn` receives from `useChat` (see `ai-sdk/chat-request.ts`), described once. */
import { z } from "zod";
import { rule, says } from "../schema/to-session-error.js";

const either = "persistChatTurn needs either messages (an array) or one message";

/** The request around the messages (`INVALID_ARGUMENT`): exactly one of `messages` and `message`, a known trigger. */
export const chatRequest = z
  .looseObject(
    {
      messages: z
        .array(z.unknown(), says("persistChatTurn needs a non-empty messages array"))
        .min(1)
        .optional(),
      message: z.unknown().optional(),
      trigger: z
        .enum(["submit-message", "regenerate-message"], {
          error: (issue) =>
            `Unknown trigger ${JSON.stringify(issue.input)}: expected "submit-message" or "regenerate-message"`,
        })
        .optional(),
      messageId: z
        .string(says("messageId must be a string (the id of the message regenerated or edited)"))
        .optional(),
    },
    says("persistChatTurn needs the request body ({ messages, trigger })"),
  )
  .refine((request) => (request.messages === undefined) !== (request.message === undefined), {
    ...says(either, "conflict"),
    path: ["messages"],
  });

/** The posted messages that are read (`INVALID_MESSAGE`): objects with a string id. */
export const postedMessages = z.array(
  z.custom<{ id: string }>(
    (entry) =>
      typeof entry === "object" &&
      entry !== null &&
      !Array.isArray(entry) &&
      typeof (entry as { id?: unknown }).id === "string",
    rule("persistChatTurn needs messages with a string id", "type"),
  ),
);
