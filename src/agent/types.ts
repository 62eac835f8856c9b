import type { FinishReason, ModelMessage } from "ai";

/** Why agent-session added or flagged a message (absent on messages the user or the model produced). */
export type SyntheticKind = "interrupted" | "missing-tool-result" | "compaction";

/** Bookkeeping agent-session keeps next to each stored message; never sent to the model. */
export interface AgentMessageMetadata {
  /** The turn (1-based) the message belongs to. */
  turn?: number;
  /** The model step (0-based) of the turn that produced the message. */
  step?: number;
  /** On assistant messages of a step: why the model stopped that step ("stop", "tool-calls", …). */
  finishReason?: string;
  /** True on the message that closes a turn which did not finish (crash, error, interrupt). */
  interrupted?: boolean;
  /** Set when agent-session wrote the message itself rather than the user or the model. */
  synthetic?: SyntheticKind;
  /** On a compaction marker: the first message kept verbatim after the summary (null = none before the marker). */
  compaction?: { keepFromId: string | null; summarizedMessages: number };
  [key: string]: unknown;
}

/**
 * One stored message: an AI SDK `ModelMessage` (what `streamText` takes and returns, so a loaded history can be
 * sent as is) plus an id, a creation time and metadata, which are stripped before every model call.
 */
export type AgentMessage = ModelMessage & {
  id: string;
  /** Epoch milliseconds. */
  createdAt: number;
  metadata?: AgentMessageMetadata;
};

/** One model call in the usage ledger. */
export interface UsageEntry {
  /** "step" = one step of a turn, "compaction" = a summarisation call. */
  kind: "step" | "compaction";
  /** The turn (1-based) the call belongs to; 0 for calls outside a turn. */
  turn: number;
  /** The step (0-based) within the turn. */
  step: number;
  /** "provider:modelId" of the model that answered. */
  model: string;
  /** Epoch milliseconds. */
  at: number;
  /** All input tokens, cached or not. */
  inputTokens: number;
  outputTokens: number;
  /** Input tokens read from the provider's prompt cache (part of `inputTokens`). */
  cacheReadTokens: number;
  /** Input tokens written to the provider's prompt cache (part of `inputTokens`). */
  cacheWriteTokens: number;
  /** Output tokens spent on reasoning (part of `outputTokens`). */
  reasoningTokens: number;
  /** US dollars, present when prices were given. */
  costUsd?: number;
}

/** Sums over usage entries. */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  totalTokens: number;
  /** Present when at least one entry was priced. */
  costUsd?: number;
  /** Number of step entries. */
  steps: number;
  /** Number of compaction entries. */
  compactions: number;
}

/** A session's usage: the per-call ledger and the totals derived from it. */
export interface AgentSessionUsage extends UsageTotals {
  entries: UsageEntry[];
}

/** Prices in US dollars per million tokens; cache prices default to the input price. */
export interface ModelPricing {
  inputPerMillion: number;
  outputPerMillion: number;
  cacheReadPerMillion?: number;
  cacheWritePerMillion?: number;
}

/** Everything a storage keeps about one session (the reference's `SessionState`). */
export interface SessionState {
  id: string;
  messages: AgentMessage[];
  usage: AgentSessionUsage;
  /** User metadata; keys starting with "agent." are reserved for agent-session. */
  metadata: Record<string, unknown>;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Epoch milliseconds. */
  updatedAt: number;
  /** The session this one was forked from. */
  parentId?: string;
}

/** What an incremental append changes besides adding messages. */
export interface SessionPatch {
  updatedAt: number;
  /** Ledger entries to add after the existing ones. */
  usage?: UsageEntry[];
  /** Replaces the whole metadata object when present (metadata is small; messages and usage are not). */
  metadata?: Record<string, unknown>;
}

/**
 * Where sessions live. The four seed methods are required; `appendMessages` is the optional fast path that writes
 * only what is new (a storage without it gets a full `save` per step, which is O(history) per write).
 */
export interface SessionStorage {
  /** Writes a whole state, replacing any stored one with the same id. */
  save(state: SessionState): Promise<void>;
  /** The stored state, or undefined for an unknown id. */
  load(sessionId: string): Promise<SessionState | undefined>;
  /** Removes a session; unknown ids are ignored. */
  delete(sessionId: string): Promise<void>;
  /** Ids of all stored sessions. */
  list(): Promise<string[]>;
  /**
   * Writes a new session, failing with `CONFLICT` (and writing nothing) when one with this id is stored, in one
   * atomic check-and-write; without it `createSession` checks with `load()` then `save()`, which two concurrent
   * creates of the same id can both pass.
   */
  create?(state: SessionState): Promise<void>;
  /** Adds messages and ledger entries to a stored session; fails with `NOT_FOUND` when it was never saved. */
  appendMessages?(sessionId: string, messages: AgentMessage[], patch: SessionPatch): Promise<void>;
  /**
   * The storage as one owner (a user, a tenant) sees it: new sessions are that owner's, another owner's are unknown
   * (the store-backed storages have it; `createSession`'s `owner` calls it).
   */
  forOwner?(owner: string): SessionStorage;
  /** Releases connections the storage opened itself. */
  close?(): Promise<void>;
}

/** Why a turn ended. */
export type StopReason = "completed" | "max-turns" | "awaiting-tool-results" | "interrupted" | "error";

/** One event of a running turn, in the order things happened. */
export type AgentEvent =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "tool-call"; toolCallId: string; toolName: string; input: unknown }
  | { type: "tool-result"; toolCallId: string; toolName: string; input: unknown; output: unknown }
  | { type: "tool-error"; toolCallId: string; toolName: string; input: unknown; error: string }
  | { type: "message"; message: AgentMessage }
  | { type: "step"; step: number; finishReason: FinishReason; usage: UsageEntry }
  | { type: "error"; error: unknown; message: string }
  | {
      type: "stop";
      turn: number;
      reason: StopReason;
      finishReason?: FinishReason;
      /** This turn's calls. */
      usage: UsageTotals;
      /** The whole session's calls so far. */
      totalUsage: UsageTotals;
    };
