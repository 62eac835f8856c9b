import type { ModelMessage, UserModelMessage } from "ai";
import { neutralizeContent } from "../context/neutralize.js";
import { neutralizeTextParts, reminderFailure, remindLatestUser } from "../context/reminder.js";
import type { SessionError } from "../errors.js";
import type { SessionMemory } from "./session-config.js";

/**
 * The memory's reminder for a turn, or null. One that cannot be built (a remind block's provider threw) must not
 * fail the turn: `report` gets it as a `SessionError` and the turn goes on without it.
 */
export async function turnReminder(
  memory: SessionMemory | undefined,
  report: (failure: SessionError) => void,
): Promise<string | null> {
  if (typeof memory?.reminder !== "function") return null;
  try {
    return await memory.reminder();
  } catch (error) {
    report(reminderFailure(error));
    return null;
  }
}

/** The user message with its text neutralised (see `neutralizeContent`); the same object when none changes. */
function neutralizeUser(message: UserModelMessage): UserModelMessage {
  if (typeof message.content === "string") {
    const text = neutralizeContent(message.content);
    return text === message.content ? message : { ...message, content: text };
  }
  const content = neutralizeTextParts(message.content);
  return content === message.content ? message : { ...message, content };
}

/** The call's messages for the model (see `remindLatestUser`), the reminder a last text part; an empty one adds none. */
export function withReminder(messages: ModelMessage[], reminder: string | null | undefined): ModelMessage[] {
  return remindLatestUser(
    messages,
    reminder || null,
    (message) => neutralizeUser(message as UserModelMessage),
    (message, text) => {
      const { content } = message as UserModelMessage;
      const parts = typeof content === "string" ? [{ type: "text" as const, text: content }] : content;
      return { ...message, content: [...parts, { type: "text", text }] } as UserModelMessage;
    },
  );
}
