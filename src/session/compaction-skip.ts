/**
 * Why a compaction would store nothing: the reason and the numbers behind it, for `Session.explainCompaction()`
 * (a short session compacts nothing because the verbatim tail covers it, and a bare null does not say so).
 */
import type { SessionMessage } from "../contract/message.js";
import { isCompactionMessage } from "../message/overlay.js";
import type { CompactSettings } from "../utils/compaction-helpers.js";
import type { CompactionSkip } from "./compaction-types.js";

/** The skip for a history the compaction function's `plan()` answered null for. */
export function compactionSkip(
  history: readonly SessionMessage[],
  tokensBefore: number,
  settings: CompactSettings | undefined,
): CompactionSkip {
  const messages = history.filter((message) => !isCompactionMessage(message)).length;
  const base = { dryRun: true as const, compacts: false as const, messages, tokensBefore };
  if (settings === undefined) {
    return {
      ...base,
      reason: "function",
      message: `Nothing to compact: the compaction function's plan() found no range in the ${messages} messages`,
    };
  }
  const { protectHead, minTailMessages, tailTokenBudget } = settings;
  const numbers = { ...base, protectHead, minTailMessages, tailTokenBudget };
  if (history.length <= protectHead + minTailMessages) {
    return {
      ...numbers,
      reason: "too-few-messages",
      message:
        `Nothing to compact: ${history.length} messages are no more than the ${protectHead} first ones kept ` +
        `(protectHead) and the ${minTailMessages} last ones kept (minTailMessages)`,
    };
  }
  return {
    ...numbers,
    reason: "tail-covers-history",
    message:
      `Nothing to compact: after the ${protectHead} first messages (protectHead), the rest of the ${messages} ` +
      `messages (${tokensBefore} estimated tokens in all) fits the verbatim tail of ${tailTokenBudget} tokens ` +
      "(tailTokenBudget, whole tool calls kept together); compaction starts once the history outgrows it",
  };
}
