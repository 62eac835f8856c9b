import type { ModelMessage, UserModelMessage } from "ai";
import { neutralizeContent } from "../context/neutralize.js";
import { reminderFailure } from "../context/reminder.js";
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
  let changed = false;
  const content = message.content.map((part) => {
    if (part.type !== "text") return part;
    const text = neutralizeContent(part.text);
    if (text === part.text) return part;
    changed = true;
    return { ...part, text };
  });
  return changed ? { ...message, content } : message;
}

/**
 * The call's messages with every user message's text neutralised as block content is (no line of it can draw a
 * border or a header, so none can pass for a reminder) and a context reminder (`Session.reminder()`) as a last
 * text part of the latest user message: after the cached prefix, so the system prompt and earlier messages go out
 * byte-identical. Copies only: the stored history never changes. Unchanged without anything to neutralise or remind.
 */
export function withReminder(messages: ModelMessage[], reminder: string | null | undefined): ModelMessage[] {
  let out = messages;
  let latestUser = -1;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== "user") continue;
    latestUser = i;
    const neutral = neutralizeUser(message);
    if (neutral === message) continue;
    if (out === messages) out = [...messages];
    out[i] = neutral;
  }
  if (typeof reminder !== "string" || reminder.length === 0 || latestUser < 0) return out;
  if (out === messages) out = [...messages];
  const carrier = out[latestUser] as UserModelMessage;
  const content =
    typeof carrier.content === "string"
      ? [{ type: "text" as const, text: carrier.content }]
      : carrier.content;
  out[latestUser] = { ...carrier, content: [...content, { type: "text", text: reminder }] };
  return out;
}
