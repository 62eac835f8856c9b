// Learning on demand: every (or the named, or one owner's) session learned up to its last message, with progress.

import { z } from "zod";
import { type FactCapableStore, hasFactStore } from "../contract/facts.js";
import { hasSessionRegistry } from "../contract/registry.js";
import type { SessionStore } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { sleep } from "../runtime/deadline.js";
import { parseInput } from "../schema/parse.js";
import { func } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";
import { ownerId } from "../store/owner.js";
import { learnSettings } from "./config.js";
import { emptyCounts } from "./counts.js";
import { learningOf, learnSession } from "./session.js";
import type { LearnCounts, LearnOptions } from "./types.js";

const scopeOptions = z.looseObject({
  sessionIds: z
    .array(z.string(rule("learnFacts(): sessionIds must be an array of session ids")), {
      error: "learnFacts(): sessionIds must be an array of session ids",
    })
    .optional(),
  owner: ownerId("learnFacts(): owner").optional(),
  onProgress: func("learnFacts(): onProgress must be a function").optional(),
  signal: z
    .custom<AbortSignal>(
      (value) => value instanceof AbortSignal,
      rule("learnFacts(): signal must be an AbortSignal"),
    )
    .optional(),
});

/** Sessions read per page of an owner's list. */
const PAGE = 500;

/** The options of {@link learnFacts}. */
export interface LearnFactsOptions extends LearnOptions {
  /** Only these sessions (default: every registered session, or the owner's). */
  sessionIds?: readonly string[];
  /** Only this owner's sessions. */
  owner?: string;
  /** Called after each session with the counts so far. */
  onProgress?: (progress: { sessions: number; sessionId: string; counts: LearnCounts }) => void;
  /** Stops the learn (it rejects with the signal's reason; the marks keep what was learned). */
  signal?: AbortSignal;
}

/** What a learn did: its counts and how many sessions it went through. */
export interface LearnReport extends LearnCounts {
  sessions: number;
}

/** Marks the store's facts as needed: `UNSUPPORTED` on a store without a fact store. */
export function factStoreOf(store: SessionStore): FactCapableStore {
  if (!hasFactStore(store)) {
    throw new SessionError(
      "UNSUPPORTED",
      `learning facts needs a store with facts; the ${store.backend} store has none`,
    );
  }
  return store;
}

/**
 * Learns facts from the sessions' messages not learned yet (a backfill, or a catch-up the CLI runs), each session
 * claimed from any other learner for the time it is learned; a session another learner holds is left to it and
 * listed under `busy`. A failed batch is tried again after a growing delay, then skipped and listed.
 */
export async function learnFacts(store: SessionStore, options: LearnFactsOptions): Promise<LearnReport> {
  const facts = factStoreOf(store);
  const settings = learnSettings(options);
  parseInput(scopeOptions, options);
  const signal = options.signal ?? new AbortController().signal;
  const counts = emptyCounts();
  const learning = learningOf(facts, settings, counts, "learn", true);
  let sessions = 0;
  for await (const sessionId of sessionsOf(facts, options)) {
    const result = await learnSession(learning, sessionId, signal, (ms) => sleep(ms, signal));
    if (result.state === "busy" || result.state === "lost") counts.busy.push(sessionId);
    sessions++;
    options.onProgress?.({ sessions, sessionId, counts });
  }
  return { ...counts, sessions };
}

async function* sessionsOf(store: FactCapableStore, options: LearnFactsOptions): AsyncIterable<string> {
  if (options.sessionIds !== undefined) {
    yield* new Set(options.sessionIds);
    return;
  }
  if (!hasSessionRegistry(store)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      "learnFacts(): name the sessionIds (the store has no registry)",
    );
  }
  if (options.owner === undefined) {
    for await (const info of store.registry.scan()) yield info.id;
    return;
  }
  // Oldest activity first: the owner's facts are one scope, so the session written to last is learned last and its
  // word supersedes the older sessions' (the registry lists newest first). Ids only, read before any is learned.
  const ids: string[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await store.registry.list({ owner: options.owner, limit: PAGE, offset });
    ids.push(...page.map((info) => info.id));
    if (page.length < PAGE) break;
  }
  yield* ids.reverse();
}
