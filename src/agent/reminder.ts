import type { ModelMessage } from "ai";

/**
 * The call's messages with a context reminder (`Session.reminder()`) as a last text part of the latest user
 * message: after the cached prefix, so the system prompt and earlier messages go out byte-identical. Copies only:
 * the stored history never holds the reminder. Unchanged without a reminder or a user message.
 */
export function withReminder(messages: ModelMessage[], reminder: string | null | undefined): ModelMessage[] {
  if (typeof reminder !== "string" || reminder.length === 0) return messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== "user") continue;
    const content =
      typeof message.content === "string"
        ? [{ type: "text" as const, text: message.content }]
        : message.content;
    const out = [...messages];
    out[i] = { ...message, content: [...content, { type: "text", text: reminder }] };
    return out;
  }
  return messages;
}
