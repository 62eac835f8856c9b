// The shapes of learning: what an extractor is given and answers, the learner's options and its report.
import type { Fact, FactScope, LearnableMessage } from "../contract/facts.js";

/** What one extractor call is given: one batch of a session's messages and the scope's known current facts. */
export interface ExtractInput {
  sessionId: string;
  /** Where the facts go: the session's owner, or the session itself when it has none. */
  scope: FactScope;
  /** The batch, in store order (each message's text already cut to the prompt's bound, marked when cut). */
  messages: readonly LearnableMessage[];
  /** Current facts of the scope that may concern the batch (bounded), so an answer can name one to replace. */
  known: readonly Fact[];
  /** Aborted at the call's deadline or when the learner stops. */
  signal: AbortSignal;
}

/** What an extracted fact does to the known facts (see docs/FACTS.md, "Consolidation"). */
export type FactAction = "add" | "supersede" | "invalidate" | "duplicate";

/** One fact as an extractor answers it, before it is checked. */
export interface ExtractedFact {
  /** One self-contained sentence. */
  text: string;
  /** Whom or what it is about; null or left out when it says no more. */
  about?: string | null | undefined;
  /** Ids of the batch's messages it comes from (at least one; ids outside the batch are refused). */
  sources: readonly string[];
  /** What it does to a known fact; default: the rule decides (add or duplicate). */
  action?: FactAction | null | undefined;
  /** The known fact's id that `action` supersedes, invalidates or repeats. */
  target?: string | null | undefined;
}

/** A plain function extractor: one batch in, the facts found out. */
export type ExtractFunction = (input: ExtractInput) => Promise<readonly ExtractedFact[]>;

/** An AI SDK language model (V3 or V4), recognised by its `doGenerate`. */
export interface LanguageModelLike {
  readonly specificationVersion: string;
  readonly provider: string;
  readonly modelId: string;
  doGenerate(...args: never[]): PromiseLike<unknown>;
}

/**
 * What learns facts: a function, or an AI SDK language model used with the shipped prompt: a model object, or a model
 * id string (`"openai/gpt-4.1-mini"`, what ai@7's `LanguageModel` type also holds), resolved by the AI SDK as
 * `generateText({ model: "…" })` resolves it (the global default provider, else the Vercel AI Gateway).
 */
export type Extractor = ExtractFunction | LanguageModelLike | string;

/** A batch whose extractor call failed: reported through `onError` on each failed try, listed once skipped. */
export interface BatchFailure {
  sessionId: string;
  /** The store order (`seq`) of the batch's first and last message. */
  fromSeq: number;
  throughSeq: number;
  /** Failed tries so far. */
  attempts: number;
  /** The last try's error message. */
  error: string;
  /** True when the batch was given up (the mark moved past it); false when it will be tried again. */
  skipped: boolean;
}

/** Counts of one learn (a backfill's, or the background learner's running totals). */
export interface LearnCounts {
  /** Messages read and moved past (learned, or skipped with their batch). */
  messages: number;
  /** Batches sent to the extractor and stored. */
  batches: number;
  added: number;
  superseded: number;
  invalidated: number;
  /** Facts dropped as repeats of a known fact (or of a fact stored by an earlier try of the same batch). */
  duplicates: number;
  /** Facts refused on their own: out of schema, oversized, or naming a source outside the batch. */
  refused: number;
  /** Failed extractor calls (each retried, or its batch skipped). */
  failures: number;
  /** Batches given up after their retries. */
  skipped: BatchFailure[];
  /** Sessions another learner held (left to it). */
  busy: string[];
  /**
   * Sessions whose facts the store refuses (`DECRYPT_FAILED`: an encrypted owner whose key the store lacks or has
   * wrong), left at once with their mark where it was, so a store with the key learns them.
   */
  encrypted: string[];
}

/** The background learner's and a backfill's options. */
export interface LearnOptions {
  /** What learns the facts. */
  extractor: Extractor;
  /** The system prompt of a model extractor (default {@link DEFAULT_FACT_PROMPT}). */
  prompt?: string;
  /** Shown with each fact as its producer (default `model:<provider>/<id>` or `function:<name>`). */
  producer?: string;
  /** Messages per batch at most (default 20, at most 200). */
  window?: number;
  /** A pause longer than this between two messages starts a new sitting, and a new batch (default 30 min). */
  sittingGapMs?: number;
  /** Known current facts shown to the extractor per batch (default 40, at most 100). */
  knownFacts?: number;
  /** Milliseconds one extractor call may take (default 120 s). */
  timeoutMs?: number;
  /** Failed tries of a batch before it is skipped (default 3). */
  maxAttempts?: number;
  /** The first retry's delay; each next one doubles (default 1 s). */
  retryDelayMs?: number;
  /** How long a claim on a session lasts (renewed before each batch; default 5 min, more than `timeoutMs`). */
  leaseMs?: number;
  /** Receives each failed try and each skipped batch (default: a process warning `AgentSessionFactsWarning`). */
  onError?: (error: unknown, batch: BatchFailure) => void;
  /** Receives the facts of a batch refused one by one, with why (default: a process warning). */
  onRefused?: (reasons: readonly string[], sessionId: string) => void;
}
