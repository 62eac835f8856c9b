import type { SessionMessage } from "../contract/message.js";
import type { WritePolicy } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { describe } from "../message/describe.js";
import { isEchoedOverlay } from "../message/overlay.js";
import type { Session } from "../session/session.js";
import { prepareAppend } from "../store/write-policy.js";

/**
 * `SessionManager.appendAll`: checks every message, then appends them as a chain under `parentId` (after the
 * latest leaf when omitted, a new root with `null`); returns the last id. `cached` is the Session the manager
 * already holds for the id, if any: its own cap (`withMaxMessageBytes`) counts too. The Session is built only once
 * the input is valid.
 */
export async function appendChain<M extends SessionMessage>(
  sessionOf: () => Session<M>,
  cached: Session<M> | undefined,
  messages: M[],
  parentId: string | null | undefined,
  storePolicy: WritePolicy,
): Promise<string | null> {
  if (!Array.isArray(messages)) {
    throw new SessionError("INVALID_ARGUMENT", "appendAll expects an array of messages", {
      issues: [{ path: "messages", rule: "type" }],
    });
  }
  // Each append passes the Session's checks and then the store's: the smaller cap decides. A Session built later
  // from the manager's templates has no cap of its own.
  const own = cached?.maxMessageBytes ?? Number.POSITIVE_INFINITY;
  const maxMessageBytes = Math.min(storePolicy.maxMessageBytes, own);
  assertChain(messages, parentId, { ...storePolicy, maxMessageBytes });
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

/**
 * Throws what appending any of the messages would (shape, parent, JSON, the store's size cap, an unstorable
 * attachment look-alike: the store's own checks), and `INVALID_ARGUMENT` for an id given twice (the chain would
 * fold back onto the first), so a list that fails writes nothing instead of its first part. Hand-written: it is
 * the append path's own check (prepareAppend), run ahead for the whole chain.
 */
function assertChain(
  messages: readonly SessionMessage[],
  parentId: string | null | undefined,
  policy: WritePolicy,
) {
  const seen = new Set<string>();
  let parent = parentId;
  for (const [index, message] of messages.entries()) {
    prepareAppend(message, parent, policy, undefined);
    if (isEchoedOverlay(message)) continue;
    if (seen.has(message.id)) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `appendAll got message id ${describe(message.id)} twice: each message of a chain needs its own id`,
        { issues: [{ path: `messages.${index}.id`, rule: "conflict" }] },
      );
    }
    seen.add(message.id);
    parent = message.id;
  }
}
