/**
 * Context tokens of a path from running totals (the Postgres twin is src/postgres/tokens.ts): no message content is
 * read, so the cost does not grow with the session.
 */
import { overlayMessage } from "../message/overlay.js";
import { estimateMessageTokens } from "../message/tokens.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import { type NodeRow, nodeBySeq } from "../sql/engines/sqlite/tree.js";
import { chooseOnPath } from "./history.js";

/**
 * Estimated tokens of the overlay-applied path to `leaf` from running totals: the leaf's cumulative count, minus
 * each compacted range, plus its summary message — a few row reads whatever the session's length.
 */
export function contextTokens(
  driver: SqlDriver,
  sessionId: string,
  sessionNum: number,
  leaf: NodeRow,
): number {
  let tokens = leaf.cum_tokens;
  for (const overlay of chooseOnPath(driver, sessionId, sessionNum, leaf, 0) ?? []) {
    const from = nodeBySeq(driver, overlay.fromSeq);
    const to = nodeBySeq(driver, overlay.toSeq);
    if (!from || !to) continue;
    tokens -= to.cum_tokens - (from.cum_tokens - from.tokens);
    tokens += estimateMessageTokens([overlayMessage(overlay.compaction)]);
  }
  return tokens;
}
