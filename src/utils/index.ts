/**
 * `agent-session/utils`: the storage-free helpers (token estimates, read-time truncation, row-size enforcement,
 * tool-pair repair and the reference compaction function), importable without opening any store.
 */

export { COMPACTION_PREFIX, isCompactionMessage } from "../message/overlay.js";
export {
  CHARS_PER_TOKEN,
  estimateMessageTokens,
  estimateStringTokens,
  TOKENS_PER_MESSAGE,
  WORDS_TOKEN_MULTIPLIER,
} from "../message/tokens.js";
export {
  alignBoundaryBackward,
  alignBoundaryForward,
  buildSummaryPrompt,
  type CompactContext,
  type CompactCounterInput,
  type CompactFunction,
  type CompactOptions,
  type CompactResult,
  type CompactSessionTokenCounter,
  type CompactTokenCounter,
  computeSummaryBudget,
  createCompactFunction,
  findTailCutByTokens,
} from "./compaction-helpers.js";
export { enforceRowSizeLimit, ROW_MAX_BYTES } from "./row-size.js";
export { sanitizeToolPairs } from "./tool-pairs.js";
export {
  type TruncatedOutput,
  type TruncateOptions,
  truncateOlderMessages,
  truncateToolOutput,
} from "./truncate.js";
