import { SessionError } from "../errors.js";
import { assertMessageShape, isEchoedOverlay } from "../message.js";
import type { Session } from "../session/session.js";
import type { SessionMessage } from "../types.js";

/**
 * `SessionManager.appendAll`: validates every message, then appends them as a chain under `parentId` (after the
 * latest leaf when omitted, a new root with `null`); returns the last id. The Session is built only once the input
 * is valid.
 */
export async function appendChain<M extends SessionMessage>(
  sessionOf: () => Session<M>,
  messages: M[],
  parentId: string | null | undefined,
): Promise<string | null> {
  if (!Array.isArray(messages)) {
    throw new SessionError("INVALID_ARGUMENT", "appendAll expects an array of messages");
  }
  for (const message of messages) assertMessageShape(message);
  const session = sessionOf();
  let parent = parentId;
  for (const message of messages) {
    // An echoed overlay is ignored by the append; the chain continues under the message before it.
    if (isEchoedOverlay(message)) continue;
    await session.appendMessage(message, parent);
    parent = message.id;
  }
  return parent ?? null;
}
