import type { UIMessage } from "ai";

/** What can tell a turn's context reminder: a `Session` (`reminder()`); a store's provider cannot. */
interface RemindingStorage {
  reminder(): Promise<string | null>;
}

/** The storage's pending context reminder (`Session.reminder()`), or null when it has none or cannot tell. */
export async function contextReminder(storage: unknown): Promise<string | null> {
  const reminder = (storage as Partial<RemindingStorage> | null)?.reminder;
  return typeof reminder === "function" ? await reminder.call(storage) : null;
}

/**
 * `messages` for the model with the reminder as a last text part of the latest user message: after the cached
 * prefix (the system prompt and earlier turns stay byte-identical), and in copies, so the stored and streamed
 * messages never hold it. Unchanged without a reminder or without a user message to carry it.
 */
export function withReminder<M extends UIMessage>(messages: M[], reminder: string | null): M[] {
  if (reminder === null) return messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== "user") continue;
    const out = [...messages];
    out[i] = { ...message, parts: [...message.parts, { type: "text", text: reminder }] };
    return out;
  }
  return messages;
}
