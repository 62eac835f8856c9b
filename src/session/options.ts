import type { ContextConfig, WritableContextProvider } from "../context/types.js";
import type { CompactionErrorHandler, SessionTokenCounter } from "./compaction-types.js";

/** Options of `new Session(provider, options)`. */
export interface SessionOptions {
  /** Session id used to namespace rows when the first argument is a store (default `""`). */
  sessionId?: string;
  /** Context blocks, in prompt order. */
  context?: ContextConfig[];
  /** Where the frozen system prompt is persisted. */
  promptStore?: WritableContextProvider;
  /** Counts tokens for automatic compaction (default: the library's heuristic over history and prompt). */
  tokenCounter?: SessionTokenCounter;
  /** Receives failures of automatic compaction. */
  onCompactionError?: CompactionErrorHandler;
  /**
   * Largest message in UTF-8 bytes of its JSON (`metadata` included): a larger one is refused with `TOO_LARGE`,
   * never truncated. Default: no cap (a store may have its own).
   */
  maxMessageBytes?: number;
  /** @deprecated the old name of `maxMessageBytes`; it now refuses a larger message instead of truncating it. */
  maxRowBytes?: number;
  /** Metadata keys stripped from writes marked `{ source: "client" }` (kept on server writes). */
  reservedMetadataKeys?: string[];
}
