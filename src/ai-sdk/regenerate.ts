import type { SessionMessage } from "../contract/message.js";
import { SessionError } from "../errors.js";
import type { ChatStorage } from "./storage.js";

/**
 * The message before the stored answer a regenerate ends on (its question, or a summary ending there): the new
 * answer goes under it, a sibling of the old one (what `useChat` asks for by posting the conversation without the answer). The
 * request says "regenerate", so the answer is never continued, whatever the page's copy of it holds. `messageId`
 * naming another message contradicts the request (`INVALID_ARGUMENT`); an answer a summary covers, or one with
 * nothing before it to answer, cannot be regenerated (`CONFLICT`).
 */
export async function regeneratedParent(
  storage: ChatStorage,
  answer: SessionMessage,
  messageId: string | undefined,
): Promise<SessionMessage> {
  if (messageId !== undefined && messageId !== answer.id) throw contradiction(messageId, answer.id);
  const path = await storage.getHistory(answer.id);
  if (path[path.length - 1]?.id !== answer.id) {
    throw new SessionError(
      "CONFLICT",
      `Answer "${answer.id}" is covered by a summary, so it cannot be regenerated: reload the conversation (loadChat)`,
    );
  }
  const before = path[path.length - 2];
  if (before === undefined) {
    throw new SessionError(
      "CONFLICT",
      `Answer "${answer.id}" starts the conversation, so there is no message to answer again`,
    );
  }
  return before;
}

/**
 * Checks a regenerate's `messageId` against where the new answer goes (`under`, the stored message the request
 * ends on, posted as `postedId`): it may name that message (`regenerate({ messageId })` of a user message), an
 * answer under it (the one regenerated), or a message the store does not have (an answer that was never stored).
 */
export async function checkRegenerated(
  storage: ChatStorage,
  messageId: string | undefined,
  under: string,
  postedId: string,
): Promise<void> {
  if (messageId === undefined || messageId === postedId || messageId === under) return;
  if ((await storage.getMessage(messageId)) === null) return;
  if ((await storage.getBranches(under)).some((child) => child.id === messageId)) return;
  throw contradiction(messageId, postedId);
}

function contradiction(messageId: string, lastId: string): SessionError {
  return new SessionError(
    "INVALID_ARGUMENT",
    `The request regenerates message "${messageId}", and its messages end on "${lastId}", which is neither that ` +
      "message nor its question: post the conversation up to the message to answer again (as useChat does)",
    { issues: [{ path: "messageId", rule: "conflict" }] },
  );
}
