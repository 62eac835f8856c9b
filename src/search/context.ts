/**
 * The turns around a search's hits (the `context` option): how each hit's context is put together from a backend's
 * rows, and the bound on what one search reads for them. A page of 1,000 hits
 * with 10 turns a side names up to 21,000 messages of any size: copied per hit, a page of 250 over 1 MB messages
 * ran the process out of heap. So each message is read once per search and shared by every hit it borders, and the
 * messages read for context are bounded by their stored size (what reading them costs), the same rule on every
 * backend.
 */
import type { SearchContext, SearchContextTurn, SearchResult } from "../contract/search.js";

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

/**
 * A row of a backend's context statement: the hit (its place in the page), the side (0 before, 1 after) and the
 * turn's message; its stored content null past the budget (and on a message's later rows, never read).
 */
export interface ContextRow<C> {
  i: number;
  side: number;
  seq: number;
  id: string;
  role: string;
  created_at: string;
  content: C | null;
}

/**
 * Sets each of `results`' context from `rows` (by hit, side, then oldest first): each message made into a turn once
 * and shared by every hit it borders (its text by `textOf`), one past the budget shown as {@link contextOverBudget}.
 */
export function setContexts<R extends ContextRow<unknown>>(
  results: readonly SearchResult[],
  rows: Iterable<R>,
  textOf: (row: R, content: NonNullable<R["content"]>) => string,
): void {
  const contexts: SearchContext[] = results.map(() => ({ before: [], after: [] }));
  const made = new Map<number, SearchContextTurn>();
  for (const row of rows) {
    // Numbers as a driver returns them: SQLite's are numbers, Postgres's integer columns may come as strings.
    const seq = Number(row.seq);
    let turn = made.get(seq);
    if (turn === undefined) {
      // Narrowed by the null check (TypeScript cannot narrow a generic row's member itself).
      const content = row.content as NonNullable<R["content"]> | null;
      turn =
        content === null
          ? contextOverBudget(row.id, row.role, row.created_at)
          : { id: row.id, role: row.role, content: textOf(row, content), createdAt: row.created_at };
      made.set(seq, turn);
    }
    const context = contexts[Number(row.i)]!;
    (Number(row.side) === 0 ? context.before : context.after).push(turn);
  }
  results.forEach((result, i) => {
    result.context = contexts[i]!;
  });
}
