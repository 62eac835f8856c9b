import type { UIMessage } from "ai";
import { neutralizeTextParts, reminderFailure, remindLatestUser } from "../context/reminder.js";
import { SessionError } from "../errors.js";
import { emitWarning } from "../runtime/warn.js";

/** What can tell a turn's context reminder: a `Session` (`reminder()`); a store's provider cannot. */
interface RemindingStorage {
  reminder(): Promise<string | null>;
}

/**
 * The storage's pending context reminder (`Session.reminder()`), or null when it has none or cannot tell. A
 * reminder that cannot be built (a remind block's provider threw) must not fail a turn whose request is already
 * stored: it is reported as an `AgentSessionContextWarning` process warning (its `cause` the `SessionError`) and
 * the turn is answered without it. A closed session is no reminder failure: that error is thrown.
 */
export async function contextReminder(storage: unknown): Promise<string | null> {
  const reminder = (storage as Partial<RemindingStorage> | null)?.reminder;
  if (typeof reminder !== "function") return null;
  try {
    return await reminder.call(storage);
  } catch (error) {
    if (error instanceof SessionError && error.code === "CLOSED") throw error;
    emitWarning(
      reminderFailure(error),
      "AgentSessionContextWarning",
      "context reminder skipped for this turn",
    );
    return null;
  }
}

/**
 * `messages` for the model: every user message's text neutralised as block content is (no line of it can draw a
 * border or a header, so none can pass for a reminder), and the reminder as a last text part of the latest user
 * message, after the cached prefix (the system prompt and earlier turns stay byte-identical). Copies only, so the
 * stored and streamed messages never change; the same array when there is nothing to neutralise or remind.
 */
export function withReminder<M extends UIMessage>(messages: M[], reminder: string | null): M[] {
  return remindLatestUser(
    messages,
    reminder,
    (message) => {
      const parts = neutralizeTextParts(message.parts);
      return parts === message.parts ? message : { ...message, parts };
    },
    (message, text) => ({ ...message, parts: [...message.parts, { type: "text", text }] }),
  );
}
