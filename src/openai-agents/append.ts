import type { SessionMessage } from "../contract/message.js";
import { SessionError } from "../errors.js";
import type { Session } from "../session/session.js";

/**
 * Stores the adapter's messages as one all-or-nothing step (`Session.appendMessages`) after the latest leaf, or
 * under `parentId`. A Session over a provider of the app's own has no steps (`UNSUPPORTED`, before anything is
 * written): there they are appended one by one, as the provider's own writes allow.
 */
export async function appendItems(
  session: Session,
  messages: SessionMessage[],
  parentId?: string | null,
): Promise<void> {
  try {
    await session.appendMessages(messages, parentId);
    return;
  } catch (error) {
    if (!(error instanceof SessionError && error.code === "UNSUPPORTED")) throw error;
  }
  let at = parentId;
  for (const message of messages) {
    await session.appendMessage(message, at);
    at = message.id;
  }
}
