/**
 * The shapes of a session's compaction: its setup, the token counter it may use, and what a compaction (or a dry
 * run of one) reports. The work itself is compaction.ts.
 */
import type { ContextBlock } from "../context/types.js";
import type { SessionMessage } from "../contract/message.js";
import type { CompactFunction, CompactResult } from "../utils/compaction-helpers.js";
import type { StatusFrames } from "./broadcast.js";

/** Counts the tokens of the whole prompt; a non-finite result counts as 0. */
export type SessionTokenCounter = (input: {
  messages: SessionMessage[];
  systemPrompt: string;
  contextBlocks: ContextBlock[];
}) => number | Promise<number>;

/** Options of `compactAfter(threshold, options)`. */
export interface CompactAfterOptions {
  tokenCounter?: SessionTokenCounter;
}

/** Receives failures of automatic compaction (the append itself has succeeded). */
export type CompactionErrorHandler = (error: unknown) => void | Promise<void>;

/** How a session compacts, configured by the builder. */
export interface CompactionSetup {
  fn?: CompactFunction;
  threshold?: number;
  tokenCounter?: SessionTokenCounter;
  onError?: CompactionErrorHandler;
  /** The reference's status frames, when the session was created on an Agent with `broadcast`. */
  frames?: StatusFrames;
}

/** What a stored compaction did: the reference's result plus the overlay id and the record of its effect. */
export interface CompactionReport extends CompactResult {
  /** Id of the stored overlay (the synthetic message is `compaction_<id>`). */
  id: string;
  coveredMessages: number;
  tokensBefore: number;
  tokensAfter: number;
  summaryTokens: number;
  summaryChars: number;
}

/** What `compact({ dryRun: true })` would do, computed without calling the model. */
export interface CompactionPlan {
  dryRun: true;
  /** Always true: tells a plan from a {@link CompactionSkip} in what `explainCompaction()` answers. */
  compacts: true;
  fromMessageId: string;
  toMessageId: string;
  coveredMessages: number;
  tokensBefore: number;
  /** Estimated tokens of the visible messages the summary would replace. */
  tokensReplaced: number;
  summaryBudget: number;
  /** True when an earlier summary on this branch would be updated rather than replaced. */
  iterative: boolean;
}

/**
 * Why a compaction would store nothing (what `explainCompaction()` answers where `planCompaction()` is null): the
 * reason, a sentence saying it with the numbers, and the numbers. `function`: a compaction function without
 * `settings` (not from `createCompactFunction`) planned nothing.
 */
export interface CompactionSkip {
  dryRun: true;
  compacts: false;
  reason: "too-few-messages" | "tail-covers-history" | "function";
  message: string;
  /** Messages on the path (summaries not counted). */
  messages: number;
  /** Estimated tokens of the path (summaries applied). */
  tokensBefore: number;
  protectHead?: number;
  minTailMessages?: number;
  tailTokenBudget?: number;
}
