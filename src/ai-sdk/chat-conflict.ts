/**
 * Two requests of one chat at once (two tabs, a double click, two app processes behind one store): the second is
 * refused with `CONFLICT` before the model runs, never stored beside the first. A request that sends a message
 * goes after a stored message nothing has answered yet — a message with replies is one the page has not seen
 * (an edit is the exception: it is a sibling on purpose, and so is the latest leaf, whose replies a delete left on
 * other branches) — and its first write expects the session's latest leaf
 * still to be the one read before the checks, so a request planned at the same moment cannot slip in between. A
 * submit of a user message the store already has is a second send of it (its answer is being written, or was).
 * The answer of a send is stored only while its question is still the latest leaf.
 */
import type { SessionMessage } from "../contract/message.js";
import { SessionError } from "../errors.js";
import type { ChatStorage } from "./storage.js";

const RELOAD = "reload the conversation (loadChat)";

/** The session's latest leaf id before a send is planned (undefined: the storage cannot tell, no guard). */
export async function leafBeforeSend(storage: ChatStorage): Promise<string | null | undefined> {
  if (!storage.getLatestLeaf) return undefined;
  return (await storage.getLatestLeaf())?.id ?? null;
}

/**
 * Refuses a send whose first new message would fork the chat without the page asking for it: under a stored
 * message that already has replies, or as a new root of a session that has messages (`anchor` null). An edit
 * (`edit`: the message is stored under an id of its own, beside the one it edits) is a fork the page asked for.
 */
export async function assertUnanswered(
  storage: ChatStorage,
  anchor: string | null,
  leaf: string | null | undefined,
  edit: boolean,
): Promise<void> {
  if (edit) return;
  if (anchor === null) {
    if (leaf === null || leaf === undefined) return;
    throw new SessionError(
      "CONFLICT",
      `None of the messages the page posted is stored, and the chat already has messages: ${RELOAD}`,
    );
  }
  // The latest leaf is what a reload shows last, even with replies on other branches (its answer was deleted, so
  // the path gave way to it): a page that sends from it is in step with the store.
  if (anchor === leaf) return;
  if ((await storage.getBranches(anchor)).length === 0) return;
  throw new SessionError(
    "CONFLICT",
    `Message "${anchor}" already has a reply the page does not show (another request of this chat was stored ` +
      `first): ${RELOAD}`,
  );
}

/** A submit of a user message the store already has: another request sent it (see the module comment). */
export function alreadySent(message: SessionMessage): SessionError {
  return new SessionError(
    "CONFLICT",
    `Message "${message.id}" was already sent (another request of this chat stored it; its answer is being ` +
      `written or was): ${RELOAD}, or regenerate to answer it again`,
  );
}

/** Appends the page's new messages in order, the first only while `leaf` is still the latest; returns the last id. */
export async function appendSent(
  storage: ChatStorage,
  parentId: string | null | undefined,
  messages: readonly SessionMessage[],
  leaf: string | null | undefined,
): Promise<string> {
  let at = parentId;
  for (const [i, message] of messages.entries()) {
    const guard = i === 0 && leaf !== undefined ? { expectedLeafId: leaf } : {};
    const result = await storage.appendMessage(message, at, { source: "client", ...guard });
    if ((result as { inserted?: boolean } | undefined)?.inserted === false) {
      // Stored by another request between this one's reads and its write: the same send, twice.
      throw alreadySent(message);
    }
    at = message.id;
  }
  return at!;
}

/**
 * Stores a send's answer under `parentId` only while that is still the latest leaf: a request of the chat that
 * stored a message meanwhile (another tab, after the page reloaded mid-answer) keeps the chat linear, and this
 * answer is refused with `CONFLICT` rather than stored beside that message, hiding it (the memory middleware's
 * rule: the one that finishes second stores nothing). False when the id is stored already (a continuation): the
 * caller replaces it.
 */
export async function appendAnswer(
  storage: ChatStorage,
  answer: SessionMessage,
  parentId: string | null,
): Promise<boolean> {
  if ((await storage.getMessage(answer.id)) !== null) return false;
  try {
    const result = await storage.appendMessage(answer, parentId, {
      source: "server",
      expectedLeafId: parentId,
    });
    return (result as { inserted?: boolean } | undefined)?.inserted !== false;
  } catch (error) {
    if (!(error instanceof SessionError && error.code === "CONFLICT")) throw error;
    throw new SessionError(
      "CONFLICT",
      `The answer to "${parentId}" was not stored: another request of this chat stored a message after it ` +
        `meanwhile (${error.message})`,
      { cause: error },
    );
  }
}
