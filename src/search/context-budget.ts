/**
 * The bound on what one search reads for the turns around its hits (the `context` option). A page of 1,000 hits
 * with 10 turns a side names up to 21,000 messages of any size: copied per hit, a page of 250 over 1 MB messages
 * ran the process out of heap. So each message is read once per search and shared by every hit it borders, and the
 * messages read for context are bounded by their stored size (what reading them costs), the same rule on every
 * backend.
 */
import type { SearchContextTurn } from "../contract/search.js";

/**
 * Most bytes of stored messages (their JSON, as the byte budgets of `getRecentHistory` count it) one search reads
 * for context. The distinct turns count once each, in page order (each hit's turns before, oldest first, then
 * after); from the first turn that would go over, the rest are shown as {@link contextOverBudget}.
 */
export const SEARCH_CONTEXT_BYTES = 8 * 1024 * 1024;

/** What a turn past the budget holds instead of its text: a visible marker, never a silently missing turn. */
export const CONTEXT_OVER_BUDGET =
  `[turn not shown: this search's context is limited to ${SEARCH_CONTEXT_BYTES} bytes of messages; ` +
  "search with a smaller limit or context to see it]";

/** A turn past the budget: where it is and who said it, its text replaced by the marker. */
export function contextOverBudget(
  id: string,
  role: string,
  createdAt: string | undefined,
): SearchContextTurn {
  const turn: SearchContextTurn = { id, role, content: CONTEXT_OVER_BUDGET };
  if (createdAt !== undefined) turn.createdAt = createdAt;
  return turn;
}
