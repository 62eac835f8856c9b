/**
 * A message among its siblings (`getSiblings`), backend-neutral: each backend reads at most one sibling more than
 * the cap, oldest first, and this turns the rows into the answer, so the cap and its error are the same everywhere.
 */

import type { SessionMessage } from "../contract/message.js";
import type { Siblings } from "../contract/provider.js";
import { SessionError } from "../errors.js";
import { describe } from "../message/describe.js";

/** The most siblings `getSiblings` returns; a message with more is `TOO_LARGE` (never a silently shortened list). */
export const MAX_SIBLINGS = 100;

/**
 * The answer for `messageId` from its siblings as read (at most `MAX_SIBLINGS + 1`, oldest first; null when the
 * message is not stored): null also when its own row could not be read back (a corrupt row is skipped by reads).
 */
export function siblingsOf(messageId: string, read: SessionMessage[] | null): Siblings | null {
  if (read === null) return null;
  if (read.length > MAX_SIBLINGS) {
    throw new SessionError(
      "TOO_LARGE",
      `Message ${describe(messageId)} has more than ${MAX_SIBLINGS} siblings (MAX_SIBLINGS): getSiblings answers at most ${MAX_SIBLINGS}`,
    );
  }
  const index = read.findIndex((message) => message.id === messageId);
  return index < 0 ? null : { siblings: read, index };
}
