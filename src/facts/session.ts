/**
 * Learning one session: claim it (one learner per session across processes), read what follows its mark a batch
 * at a time, extract, consolidate, and move the mark past the batch; a failed batch is tried again after a growing
 * delay, then skipped with a report. Resumable: a learner that stops anywhere leaves the mark at the last batch it
 * finished, and a fact stored by a batch learned again is found by its id (consolidate.ts), never added twice.
 */
import type { FactCapableStore, FactScope, LearnableMessage } from "../contract/facts.js";
import { hasSessionRegistry, type OwnerDigest } from "../contract/registry.js";
import { SessionError } from "../errors.js";
import { backoffMs, within } from "../runtime/deadline.js";
import { reportTo } from "../runtime/warn.js";
import { firstBatch, knownFacts, promptMessages } from "./batch.js";
import { checkAnswer } from "./check.js";
import type { LearnSettings } from "./config.js";
import { consolidate } from "./consolidate.js";
import { countOutcome } from "./counts.js";
import { type ExtractCall, extractCall } from "./extractor.js";
import type { BatchFailure, LearnCounts } from "./types.js";

/** What a learner brings to a session: the store, the extractor, its settings and its holder token. */
export interface Learning {
  store: FactCapableStore;
  call: ExtractCall;
  settings: LearnSettings;
  /** This learner's token in the session's lease. */
  holder: string;
  counts: LearnCounts;
  /** Reports a failed try or a skipped batch. */
  failed(error: unknown, failure: BatchFailure): void;
  /** True when a caller waits for the learning (a backfill): its deadlines keep the process alive. */
  awaited: boolean;
  /** Reports facts refused one by one. */
  refused(reasons: readonly string[], sessionId: string): void;
  /** Scopes whose facts the store refused (`DECRYPT_FAILED`): their other sessions spend no extractor call. */
  encryptedScopes: Set<string>;
  now(): number;
}

const WARNING = "AgentSessionFactsWarning";

/** A failure of the store (or the feed) rather than of a batch, as the failure of no batch (attempts 0). */
export function storeFailure(error: unknown, sessionId: string): BatchFailure {
  const message = error instanceof Error ? error.message : String(error);
  return { sessionId, fromSeq: 0, throughSeq: 0, attempts: 0, error: message, skipped: false };
}

/**
 * What a learner brings, from its settings: `holder` names it in leases (a prefix and a fresh UUID), `awaited` says
 * whether a caller waits (a backfill); failures and refusals go to the settings' handlers, else to a warning.
 */
export function learningOf(
  store: FactCapableStore,
  settings: LearnSettings,
  counts: LearnCounts,
  holder: string,
  awaited: boolean,
): Learning {
  return {
    store,
    encryptedScopes: new Set(),
    call: extractCall(settings.extractor, settings),
    settings,
    holder: `${holder}_${crypto.randomUUID()}`,
    counts,
    awaited,
    failed: (error, failure) => {
      const { onError } = settings;
      reportTo(onError && (() => onError(error, failure)), error, WARNING, `learning ${failure.sessionId}`);
    },
    refused: (reasons, sessionId) => {
      const { onRefused } = settings;
      const handler = onRefused && (() => onRefused(reasons, sessionId));
      reportTo(handler, reasons.join("; "), WARNING, `facts refused in ${sessionId}`);
    },
    now: Date.now,
  };
}

/**
 * How a session's learning ended: all learned, held by another learner, refused by the store (an encrypted owner's
 * facts on a store without the owner's key), or a failed batch to try after `retryIn`.
 */
export type SessionResult =
  | { state: "done" | "busy" | "lost" | "encrypted" }
  | { state: "retry"; retryIn: number };

/** Whose facts a session's are: its owner's when it has one, else its own. */
export async function scopeOf(store: FactCapableStore, sessionId: string): Promise<FactScope> {
  const owner = hasSessionRegistry(store) ? (await store.registry.get(sessionId))?.owner : undefined;
  return owner === undefined ? { sessionId } : { owner };
}

/**
 * Learns `sessionId` up to its last stored message. `wait` (a backfill) sleeps between a batch's tries through
 * `pause`; without it (the background learner) a failed try ends the call with the delay before the next.
 */
export async function learnSession(
  learning: Learning,
  sessionId: string,
  signal: AbortSignal,
  pause?: (ms: number) => Promise<void>,
): Promise<SessionResult> {
  const { store, settings, holder } = learning;
  const facts = store.facts;
  const claimed = await facts.claim(sessionId, holder, learning.now(), learning.now() + settings.leaseMs);
  if (claimed === null) return { state: "busy" };
  try {
    const scope = await scopeOf(store, sessionId);
    const scopeKey = JSON.stringify(scope);
    if (learning.encryptedScopes.has(scopeKey)) {
      learning.counts.encrypted.push(sessionId);
      return { state: "encrypted" };
    }
    let { through, failures } = claimed;
    for (;;) {
      signal.throwIfAborted();
      // A store without the owner's key cannot open the session's sealed messages either: that is the same refusal.
      const read = await facts.unlearned(sessionId, through, settings.window).catch((error: unknown) => {
        if (error instanceof SessionError && error.code === "DECRYPT_FAILED") return null;
        throw error;
      });
      if (read === null) return leave(learning, scopeKey, sessionId);
      const batch = firstBatch(read, settings.sittingGapMs);
      const last = batch[batch.length - 1];
      if (last === undefined) return { state: "done" };
      // The lease is renewed before each batch: it outlives one extractor call (config.ts), not a whole session.
      if (
        (await facts.claim(sessionId, holder, learning.now(), learning.now() + settings.leaseMs)) === null
      ) {
        return { state: "lost" };
      }
      try {
        await learnBatch(learning, sessionId, scope, batch, signal);
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        // The store cannot seal this scope's facts (an encrypted owner whose key it lacks or has wrong): no try would
        // pass, and skipping the batch would move the mark past messages a store with the key learns. Leave it.
        if (error instanceof SessionError && error.code === "DECRYPT_FAILED")
          return leave(learning, scopeKey, sessionId);
        failures++;
        learning.counts.failures++;
        const skipped = failures >= settings.maxAttempts;
        const failure = describe(sessionId, batch, failures, error, skipped);
        if (!skipped) {
          if (!(await facts.advance(sessionId, holder, through, failures))) return { state: "lost" };
          learning.failed(error, failure);
          const retryIn = backoffMs(settings.retryDelayMs, failures);
          if (pause === undefined) return { state: "retry", retryIn };
          await pause(retryIn);
          continue;
        }
        learning.counts.skipped.push(failure);
        learning.failed(error, failure);
      }
      if (!(await facts.advance(sessionId, holder, last.seq, 0))) return { state: "lost" };
      through = last.seq;
      failures = 0;
      learning.counts.messages += batch.length;
    }
  } finally {
    await facts.release(sessionId, holder);
  }
}

// Leaves a session whose facts the store refuses (DECRYPT_FAILED): its scope is not tried again by this learning.
function leave(learning: Learning, scopeKey: string, sessionId: string): SessionResult {
  learning.encryptedScopes.add(scopeKey);
  learning.counts.encrypted.push(sessionId);
  return { state: "encrypted" };
}

async function learnBatch(
  learning: Learning,
  sessionId: string,
  scope: FactScope,
  batch: readonly LearnableMessage[],
  signal: AbortSignal,
): Promise<void> {
  const { store, settings, counts } = learning;
  const messages = promptMessages(batch);
  if (messages.length === 0) return;
  // Before the extractor's call: a store that refuses the owner's key (DECRYPT_FAILED) spends none.
  const digests = await digestsOf(store, scope);
  const known = await knownFacts(store.facts, scope, messages, settings.knownFacts);
  const answer = await within(settings.timeoutMs, [signal], learning.awaited, "extractor", (callSignal) =>
    learning.call.extract({ sessionId, scope, messages, known, signal: callSignal }),
  );
  const checked = checkAnswer(answer, new Set(messages.map((message) => message.id)));
  const times = new Map(batch.map((message) => [message.id, message.createdAt]));
  const context = { scope, sessionId, times, known, producer: learning.call.producer, digests };
  const seen = new Set<string>();
  const refused = [...checked.refused];
  for (const fact of checked.facts) {
    try {
      countOutcome(counts, await consolidate(store.facts, context, fact, seen));
    } catch (error) {
      // A fact the store refuses on its own (its text, its size) goes alone; anything else fails the batch.
      if (!(error instanceof SessionError) || !["INVALID_ARGUMENT", "TOO_LARGE"].includes(error.code))
        throw error;
      refused.push(`"${fact.text.slice(0, 60)}": ${error.message}`);
    }
  }
  counts.refused += refused.length;
  counts.batches++;
  if (refused.length > 0) learning.refused(refused, sessionId);
}

// The keyed digests a scope's learned fact ids are derived with (consolidate.ts): its owner's, none in clear.
async function digestsOf(store: FactCapableStore, scope: FactScope): Promise<readonly OwnerDigest[]> {
  if (!("owner" in scope) || !hasSessionRegistry(store)) return [];
  return (await store.registry.ownerDigests?.(scope.owner)) ?? [];
}

function describe(
  sessionId: string,
  batch: readonly LearnableMessage[],
  attempts: number,
  error: unknown,
  skipped: boolean,
): BatchFailure {
  return {
    sessionId,
    fromSeq: (batch[0] as LearnableMessage).seq,
    throughSeq: (batch[batch.length - 1] as LearnableMessage).seq,
    attempts,
    error: error instanceof Error ? error.message : String(error),
    skipped,
  };
}
