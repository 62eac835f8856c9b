import type { UIMessage } from "ai";
import { neutralizeContent } from "../context/neutralize.js";
import { reminderFailure } from "../context/reminder.js";
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

/** The message with its text parts neutralised (see `neutralizeContent`); the same object when none changes. */
function neutralizeUser<M extends UIMessage>(message: M): M {
  let changed = false;
  const parts = message.parts.map((part) => {
    if (part.type !== "text") return part;
    const text = neutralizeContent(part.text);
    if (text === part.text) return part;
    changed = true;
    return { ...part, text };
  });
  return changed ? { ...message, parts } : message;
}

/**
 * `messages` for the model: every user message's text neutralised as block content is (no line of it can draw a
 * border or a header, so none can pass for a reminder), and the reminder as a last text part of the latest user
 * message, after the cached prefix (the system prompt and earlier turns stay byte-identical). Copies only, so the
 * stored and streamed messages never change; the same array when there is nothing to neutralise or remind.
 */
export function withReminder<M extends UIMessage>(messages: M[], reminder: string | null): M[] {
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
  if (reminder === null || latestUser < 0) return out;
  if (out === messages) out = [...messages];
  const carrier = out[latestUser]!;
  out[latestUser] = { ...carrier, parts: [...carrier.parts, { type: "text", text: reminder }] };
  return out;
}
