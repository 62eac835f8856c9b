import type { SessionMessage } from "../contract/message.js";
import { emitWarning } from "../runtime/warn.js";

/** What the reference's framework hook `internal_onMessagesChanged` receives after a Session's own writes. */
export type MessagesChangedEvent =
  | { type: "append"; message: SessionMessage; parentId: string | null | undefined; inserted: boolean }
  | { type: "update"; message: SessionMessage }
  | { type: "delete"; messageIds: string[] }
  | { type: "clear" }
  | { type: "compact" };

/** The hook's listener. */
export type MessagesChangedListener = (event: MessagesChangedEvent) => void;

/** Calls the listener; a throwing listener never fails the write (it is reported as a process warning). */
export function notifyChanged(
  listener: MessagesChangedListener | undefined,
  event: MessagesChangedEvent,
): void {
  if (!listener) return;
  try {
    listener(event);
  } catch (error) {
    emitWarning(error, "AgentSessionHookWarning");
  }
}
