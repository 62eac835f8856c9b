// Optional store capability: facts learned from conversations, each tied to the messages it came from (docs/FACTS.md).
import type { SessionStore } from "./store.js";

/** Whose a fact is: an owner's (learned from any of its sessions), or one session's when it has no owner. */
export type FactScope = { readonly owner: string } | { readonly sessionId: string };

/** Where a fact stands: the current word on its subject, replaced by a later fact, or withdrawn. */
export type FactStatus = "current" | "superseded" | "invalidated";

/** A message a fact was derived from. */
export interface FactSource {
  sessionId: string;
  messageId: string;
}

/** A fact as it is written: what was learned, about whom, when, and from which messages. */
export interface NewFact {
  /** The fact's id; generated when left out. */
  id?: string;
  /** What was learned, one self-contained sentence ("Caroline moved to Boston in May 2023."). */
  text: string;
  /** Whom or what it is about ("Caroline", "user"); null when it says no more. */
  about?: string | null;
  /** When what it says was said (ms since the epoch): its newest source's time, as the learner knows it. */
  observedAt: number;
  /** The messages it came from: at least one, each of a session of the fact's scope. */
  sources: readonly FactSource[];
  /** What produced it ("model:<id>", "function:<name>", "recorded:<name>"): shown with the fact, never parsed. */
  producer: string;
}

/** A stored fact. */
export interface Fact extends Required<Omit<NewFact, "sources">> {
  sources: FactSource[];
  /** The owner it belongs to; null for a session's own fact. */
  owner: string | null;
  /** The session a fact without an owner belongs to; null for an owner's fact. */
  sessionId: string | null;
  status: FactStatus;
  /** The fact that replaced it (status `superseded`); null otherwise. */
  supersededBy: string | null;
  /** When it was stored (ms since the epoch). */
  createdAt: number;
}

/** Which facts a list or search reads. */
export interface FactQuery {
  /** Only these statuses (default: `current` only). */
  status?: readonly FactStatus[];
  /** At most this many (default and bound: the store's page size, 100). */
  limit?: number;
  /** Only facts with a source among these messages' ids (an active-path search passes the path's ids). */
  sourcesIn?: readonly string[];
  /** Only facts with a source in this session; with `sourcesIn`, a source that is one of those messages of it. */
  sourceSession?: string;
}

/**
 * A fact found by a search, with its place in the results: the fact nested (`hit.fact.text`), where a message
 * search hit is flat (`hit.content`).
 */
export interface FactHit {
  fact: Fact;
  /** Relevance, comparable within one search only. */
  score: number;
  /** 1-based position, best first. */
  rank: number;
  /**
   * How many of the query's content terms the fact matches (the first key of the order); a store that leaves it out
   * has each of its facts taken as matching every term.
   */
  matched?: number;
}

/** A page of facts, newest first, and the cursor of the next page (null on the last). */
export interface FactPage {
  facts: Fact[];
  next: string | null;
}

/** A stored message as a learner reads it: its place in the store's order, and its text parts joined. */
export interface LearnableMessage {
  /** The store's order of the message (increasing in the order messages were stored). */
  seq: number;
  id: string;
  role: string;
  /** Its text parts joined by newlines: its searchable text (opened when sealed). */
  text: string;
  /** When it was stored (ms since the epoch). */
  createdAt: number;
}

/** How far a session's messages have been learned from, and who is learning them now. */
export interface LearnMark {
  /** The store order (`seq`) of the last message learned from; 0 before the first. */
  through: number;
  /** The learner holding the session (a process's token), or null. */
  holder: string | null;
  /** Until when (ms since the epoch) the holder's lease runs. */
  leaseUntil: number;
  /** Consecutive failed attempts at the batch after `through` (a learner backs off, then skips it). */
  failures: number;
}

/**
 * A store's facts. Each fact is in one scope and names its sources; erasing a session (or an owner) removes every
 * fact with a source in it, whatever its scope, and a fact whose sources are all deleted goes with them.
 */
export interface FactStore {
  /** Stores new facts in `scope` (status `current`); `INVALID_ARGUMENT` for a fact without sources or text. */
  add(scope: FactScope, facts: readonly NewFact[]): Promise<Fact[]>;
  /** Whether the store holds no fact at all (one indexed read): a search then leaves its fact channel out. */
  isEmpty(): Promise<boolean>;
  /** The fact `id` in `scope`, or null. */
  get(scope: FactScope, id: string): Promise<Fact | null>;
  /** Marks current fact `id` superseded by `by` (a fact of the same scope); false when `id` is not current. */
  supersede(scope: FactScope, id: string, by: string): Promise<boolean>;
  /**
   * Marks current fact `id` invalidated; false when it is not current. Its text is kept (the fact's history, read
   * with `status: ["invalidated"]`): {@link delete} removes it.
   */
  invalidate(scope: FactScope, id: string): Promise<boolean>;
  /**
   * Removes fact `id` of the scope whatever its status, with its sources, search index and vector (in its row), so
   * no readable copy is left once the store's `purge()` ran; a fact it had superseded is re-linked to the chain's next
   * fact, else current again (as in an erasure). False when the scope holds no such fact.
   */
  delete(scope: FactScope, id: string): Promise<boolean>;
  /** The scope's facts, newest first, a page at a time. */
  list(scope: FactScope, query?: FactQuery & { cursor?: string | null }): Promise<FactPage>;
  /** The scope's facts matching `query` (the library's query language), best first. */
  search(scope: FactScope, query: string, options?: FactQuery): Promise<FactHit[]>;
  /** At most `limit` messages of the session stored after `after` (a `seq`), in store order: what to learn next. */
  unlearned(sessionId: string, after: number, limit: number): Promise<LearnableMessage[]>;
  /** The learner's mark of a session (null before its first learn). */
  mark(sessionId: string): Promise<LearnMark | null>;
  /**
   * Takes the session for `holder` until `until` when no other holder's lease runs at `now`; answers the mark (null
   * when another holds it). One learner per session across processes.
   */
  claim(sessionId: string, holder: string, now: number, until: number): Promise<LearnMark | null>;
  /** Moves the mark to `through` (and failures to `failures`) while `holder` holds it; false when it does not. */
  advance(sessionId: string, holder: string, through: number, failures: number): Promise<boolean>;
  /** Lets the session go (the lease ends now); nothing when `holder` does not hold it. */
  release(sessionId: string, holder: string): Promise<void>;
  /** Every fact of the store, whatever its scope and status, oldest first, a page (at most 100) at a time: an export. */
  exportPage(query?: { cursor?: string | null; limit?: number }): Promise<FactPage>;
  /**
   * Stores facts as an export read them (scope, sources, status, what superseded them, times), at most 100 a call; a
   * fact whose id its scope holds is skipped. Every fact is checked before any is written: `INVALID_ARGUMENT` for a
   * source outside its scope or a source message this store does not hold (import the sessions first).
   */
  importFacts(facts: readonly Fact[]): Promise<{ inserted: number; skipped: number }>;
}

/** A store that keeps facts in a {@link FactStore}. */
export interface FactCapableStore extends SessionStore {
  readonly facts: FactStore;
}

/** True when the store has a {@link FactStore}. */
export function hasFactStore(store: SessionStore): store is FactCapableStore {
  const facts = (store as Partial<FactCapableStore>).facts;
  return typeof facts === "object" && facts !== null && typeof facts.add === "function";
}
