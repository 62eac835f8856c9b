/**
 * The fact doors of a {@link SessionManager} (docs/FACTS.md, "Doors"): an owner view's `facts` (list, search, get,
 * forget and learn the owner's facts, never another's), the manager's `learn` (on demand, with progress) and
 * `startLearning` (in the background, stopped by the manager's `close`). Kept apart so the manager and the owner
 * view stay lists of short methods.
 */

import { z } from "zod";
import type { Fact, FactHit, FactPage, FactQuery, FactScope, FactStore } from "../contract/facts.js";
import { hasFactStore } from "../contract/facts.js";
import type { SessionMessage } from "../contract/message.js";
import { SessionError } from "../errors.js";
import { type LearnFactsOptions, type LearnReport, learnFacts } from "../facts/learn.js";
import { type FactLearner, type LearnerOptions, startLearning } from "../facts/learner.js";
import { optionsArg } from "../options-arg.js";
import { parseInput } from "../schema/parse.js";
import { refusedBy } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";
import { parseOwner } from "../store/owner.js";
import { type ManagerState, requireSession } from "./state.js";

/** The options of a manager's or an owner view's `learn`: which sessions is said by the call, not by options. */
export type ManagerLearnOptions = Omit<LearnFactsOptions, "sessionIds" | "owner">;

/** Which facts of an owner view a read names: the owner's (default), or one owned session's own facts. */
export interface OwnerFactScope {
  /** Read the own facts (`{ sessionId }` scope) of this session of the owner instead of the owner's facts. */
  sessionId?: string;
}

/** The fact store of the manager's store, or `UNSUPPORTED`. */
function factsOf<M extends SessionMessage>(state: ManagerState<M>): FactStore {
  const { store } = state;
  if (!hasFactStore(store)) {
    throw new SessionError(
      "UNSUPPORTED",
      `facts need a store with facts; the ${store.backend} store has none`,
    );
  }
  return store.facts;
}

// The learn options must not name sessions or an owner: the call's target does, so an owner view cannot be led
// to learn (and so read) another owner's sessions through an option.
const notAnOption = (method: string, key: string) =>
  refusedBy<undefined>(
    (value) =>
      value === undefined ? undefined : `${method}(): ${key} is not an option here: name it as the target`,
    () => "conflict",
  ).optional();
const targetFree = (method: string) =>
  z.looseObject({ sessionIds: notAnOption(method, "sessionIds"), owner: notAnOption(method, "owner") });
const LEARN_OPTIONS = { learn: targetFree("learn"), "facts.learn": targetFree("facts.learn") };

/** An owner view's `sessionIds` to learn from: an array (each id is then checked to be the owner's). */
const ownedSessionIds = z.array(
  z.string(),
  rule("facts.learn(): sessionIds must be an array of session ids"),
);

function learnOptions(options: ManagerLearnOptions, method: keyof typeof LEARN_OPTIONS): ManagerLearnOptions {
  const given = optionsArg(options, method);
  parseInput(LEARN_OPTIONS[method], given);
  return given;
}

/**
 * Learns facts from one registered session (`NOT_FOUND` for any other id) or every session of `{ owner }`, as
 * `learnFacts` does, with its progress and report.
 */
export async function learnOf<M extends SessionMessage>(
  state: ManagerState<M>,
  target: string | { owner: string },
  options: ManagerLearnOptions,
): Promise<LearnReport> {
  factsOf(state);
  const given = learnOptions(options, "learn");
  if (typeof target === "string") {
    await requireSession(state, target);
    return learnFacts(state.store, { ...given, sessionIds: [target] });
  }
  if (typeof target !== "object" || target === null) {
    throw new SessionError("INVALID_ARGUMENT", "learn(): name a session id or { owner }", {
      issues: [{ path: "target", rule: "type" }],
    });
  }
  return learnFacts(state.store, { ...given, owner: parseOwner(target.owner) });
}

/** Starts a background learner over the manager's store, closed with the manager. */
export function startLearningOf<M extends SessionMessage>(
  state: ManagerState<M>,
  options: LearnerOptions,
): FactLearner {
  factsOf(state);
  const learner = startLearning(state.store, optionsArg(options, "startLearning") as LearnerOptions);
  state.learners.add(learner);
  return learner;
}

/** Closes every background learner the manager started (before its store closes). */
export async function closeLearners<M extends SessionMessage>(state: ManagerState<M>): Promise<void> {
  const learners = [...state.learners];
  state.learners.clear();
  await Promise.all(learners.map((learner) => learner.close()));
}

/**
 * One owner's facts (an owner view's `facts`): every read and write names the owner's scope, so another owner's
 * facts, or an unowned session's, are never read or changed here. A `sessionId` option must be the owner's
 * session (`NOT_FOUND` otherwise, as everywhere in the view) and reads that session's own facts.
 */
export class OwnerFacts<M extends SessionMessage = SessionMessage> {
  constructor(
    private readonly state: ManagerState<M>,
    /** The owner whose facts these are. */
    readonly owner: string,
    private readonly requireOwned: (sessionId: string) => Promise<unknown>,
  ) {}

  private async scope(sessionId: string | undefined): Promise<FactScope> {
    if (sessionId === undefined) return { owner: this.owner };
    await this.requireOwned(sessionId);
    return { sessionId };
  }

  /** The owner's facts, newest first, a page at a time (current only unless `status` asks for others). */
  async list(options?: FactQuery & OwnerFactScope & { cursor?: string | null }): Promise<FactPage> {
    const facts = factsOf(this.state);
    const { sessionId, ...query } = optionsArg(options, "facts.list");
    return facts.list(await this.scope(sessionId), query);
  }

  /** The owner's facts matching `query` (the library's query language), best first. */
  async search(query: string, options?: FactQuery & OwnerFactScope): Promise<FactHit[]> {
    const facts = factsOf(this.state);
    const { sessionId, ...rest } = optionsArg(options, "facts.search");
    return facts.search(await this.scope(sessionId), query, rest);
  }

  /** The owner's fact `id` (whatever its status), or null: also for an id of another owner's fact. */
  async get(id: string, options?: OwnerFactScope): Promise<Fact | null> {
    const facts = factsOf(this.state);
    return facts.get(await this.scope(optionsArg(options, "facts.get").sessionId), id);
  }

  /**
   * Forgets the owner's current fact `id`: it is invalidated (no longer recalled or shown in the profile), and its
   * text stays in the history; {@link delete} removes it. True when it was current; false when it was not, or is no
   * fact of this owner.
   */
  async forget(id: string, options?: OwnerFactScope): Promise<boolean> {
    const facts = factsOf(this.state);
    return facts.invalidate(await this.scope(optionsArg(options, "facts.forget").sessionId), id);
  }

  /**
   * Deletes the owner's fact `id` whatever its status: its text, sources, index and vector go (no readable copy
   * once the store's `purge()` ran). True when it was deleted; false when it is no fact of this owner.
   */
  async delete(id: string, options?: OwnerFactScope): Promise<boolean> {
    const facts = factsOf(this.state);
    return facts.delete(await this.scope(optionsArg(options, "facts.delete").sessionId), id);
  }

  /**
   * Learns from the owner's sessions (every one, or the ones `sessionIds` names: each must be the owner's, else
   * `NOT_FOUND` before anything is learned), as `learnFacts` does, with its progress and report.
   */
  async learn(options: ManagerLearnOptions & { sessionIds?: readonly string[] }): Promise<LearnReport> {
    factsOf(this.state);
    const { sessionIds, ...rest } = optionsArg(options, "facts.learn");
    const given = learnOptions(rest, "facts.learn");
    if (sessionIds === undefined) return learnFacts(this.state.store, { ...given, owner: this.owner });
    parseInput(ownedSessionIds, sessionIds, { path: "sessionIds" });
    for (const sessionId of sessionIds) await this.requireOwned(sessionId);
    return learnFacts(this.state.store, { ...given, sessionIds });
  }
}
