// The message a store keeps and the compaction overlay beside it: the shapes every layer reads and writes.

/**
 * One part of a message; structurally compatible with the AI SDK's `UIMessagePart`. Fields not declared here
 * (provider metadata, data parts, files) are stored and returned untouched.
 */
export interface SessionMessagePart {
  type: string;
  text?: string;
  reasoning?: string;
  toolCallId?: string;
  toolName?: string;
  input?: unknown;
  output?: unknown;
  state?: string;
  result?: unknown;
  errorText?: string;
  /** AI SDK v4 tool parts (`tool-invocation`). */
  toolInvocation?: unknown;
  /** AI SDK v4 tool-call arguments. */
  args?: unknown;
}

/**
 * A stored message; the AI SDK's `UIMessage` can be passed as is and every field round-trips. Any role is stored
 * (the AI SDK's three are listed for autocompletion). It is the default message type of `Session<M>` and the
 * constraint of an app's own `M` (e.g. its `UIMessage<Metadata, DataParts, Tools>`).
 */
export interface SessionMessage {
  id: string;
  role: "system" | "user" | "assistant" | (string & {});
  parts: SessionMessagePart[];
  /**
   * A `Date`, as the reference's and the AI SDK's messages have it (what the stores report about a stored row, such
   * as a search hit's `createdAt`, is an ISO-8601 string; the agent runtime's records are epoch milliseconds).
   */
  createdAt?: Date;
  /**
   * The app's own data, stored and returned untouched; a string `author` in it is who wrote the message, which
   * ranked recall reads (docs/RECALL.md#who-said-it).
   */
  metadata?: unknown;
}

/** A compaction overlay: `summary` replaces the path range `fromMessageId`..`toMessageId` when history is read. */
export interface StoredCompaction {
  id: string;
  summary: string;
  fromMessageId: string;
  toMessageId: string;
  /** ISO-8601 creation time. */
  createdAt: string;
  /** What the compaction did (tokens before/after, covered messages), when recorded. */
  details?: CompactionDetails;
}

/** The record a compaction keeps of what it did. */
export interface CompactionDetails {
  coveredMessages?: number;
  tokensBefore?: number;
  tokensAfter?: number;
  summaryTokens?: number;
  summaryChars?: number;
  [key: string]: unknown;
}
