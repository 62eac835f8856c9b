// What a search asks and what it answers, per session (SessionProvider) and across sessions (SessionStore).
import type { SessionMessage } from "./message.js";

/**
 * One full-text search hit as any provider may return it (the reference's shape: `createdAt`, `sessionId` and
 * `score` optional). `Session.search`, `SessionManager.search` and the built-in stores hand out the exact
 * {@link SearchHit}.
 */
export interface SearchResult<M extends SessionMessage = SessionMessage> {
  id: string;
  role: M["role"];
  /** The indexed text of the message (its text parts). */
  content: string;
  /** ISO-8601 time the message was stored, UTC (`toISOString()` form). */
  createdAt?: string;
  /** The session the message belongs to. */
  sessionId?: string;
  /** Whether the message lies on its session's active path (the built-in stores always set it). */
  onActivePath?: boolean;
  /**
   * Relevance of the hit, higher is more relevant, comparable within one search only. Not the order of the results:
   * those are ranked by how many query words a message and its exchange match first (see {@link SearchHit.rank}),
   * so sorting by score undoes the ranking.
   */
  score?: number;
  /**
   * Id of the compaction overlay whose summary stands for this message in the history: the original is still
   * stored and searchable, so a model can recover what the summary dropped.
   */
  compactedBy?: string;
  /** The turns around the hit, oldest first on each side, when the search asked for `context`. */
  context?: SearchContext;
}

/**
 * A search hit with every field a user relies on set: what `Session.search`, `SessionManager.search` and every
 * built-in store's `searchMessages` return. The results come in `rank` order (1, 2, 3, …).
 */
export interface SearchHit<M extends SessionMessage = SessionMessage> extends SearchResult<M> {
  /**
   * ISO-8601 time the message was stored, UTC (`toISOString()` form). `""` only from a provider of another library
   * that reports no time (the reference's own marker for an unknown time).
   */
  createdAt: string;
  /** The session the message belongs to (`""` = the default unnamed session). */
  sessionId: string;
  /**
   * Relevance of the hit, higher is more relevant, comparable within one search only; 0 from a provider that
   * reports none. Not the order of the results: sort by `rank`, never by score (a hit matching more of the query's
   * words outranks one with a higher score).
   */
  score: number;
  /** 1-based position of the hit in the results, best first: the order to keep when hits are regrouped. */
  rank: number;
}

/** One turn next to a search hit. */
export interface SearchContextTurn {
  id: string;
  role: string;
  /** The turn's text (its text parts). */
  content: string;
  /** ISO-8601 time the turn was stored, UTC (`toISOString()` form). */
  createdAt?: string;
}

/** The turns before and after a hit along its own branch, in conversation order. */
export interface SearchContext {
  before: SearchContextTurn[];
  after: SearchContextTurn[];
}

/** Which messages a search may return: only the active path of each session, or every branch. */
export type SearchBranch = "active" | "all";

/**
 * How a search matches words: `"any"` (default) is ranked recall — a message matching any content word of the query
 * is a candidate, those matching more of its words (with the turns of their exchange) rank first; `"all"` needs every
 * word of the query in the message.
 */
export type SearchMatch = "any" | "all";

/** Options of a search. */
export interface SearchOptions {
  /** Most hits returned (default 20, at most 1,000). */
  limit?: number;
  /** `"active"`: only messages on the active path of their session; `"all"` (default): every branch. */
  branch?: SearchBranch;
  /** Ranked recall (`"any"`, default) or every word required (`"all"`). */
  match?: SearchMatch;
  /** Only messages of this role, or of one of these roles. */
  role?: string | readonly string[];
  /** Only messages stored at or after this time (ISO-8601 string or Date). */
  since?: string | Date;
  /** Only messages stored before this time (ISO-8601 string or Date). */
  until?: string | Date;
  /** Also return up to this many turns before and after each hit, along its branch (0 to 10; default 0). */
  context?: number;
  /**
   * Whether ranked recall also asks the store's vector channel, fused by reciprocal rank (default true; only a
   * store made with an `embedder` has one).
   */
  vectors?: boolean;
  /**
   * Whether ranked recall also asks the store's facts (docs/FACTS.md#recall; only a store with facts has them): a
   * fact that ranks lifts the turns it came from (default true); `false` leaves them out. `"hits"` (see
   * {@link WithFactHits}) also returns the facts themselves among the turns.
   */
  facts?: boolean;
  /**
   * Whether ranked recall reads the times the query names (docs/RECALL.md#time): a question that names a day, a
   * month, a week or a year prefers the turns of that time (default true); `false` ranks by the query's words alone.
   */
  times?: boolean;
  /**
   * Whether ranked recall takes the turns of the one author the query names first among turns that match as many of
   * its words (docs/RECALL.md#who-said-it; a message's author is its `metadata.author`). Default false: reading the
   * first turns' authors is one statement more a search, which a store whose messages name no author should not pay.
   */
  authors?: boolean;
}

/** A search's options asking for the facts that rank among its results, as {@link FactSearchHit}s. */
export type WithFactHits<O extends object> = Omit<O, "facts"> & { facts: "hits" };

/**
 * A fact found by a search that asked for `facts: "hits"`: what was learned and the messages it came from, ranked
 * among the turns (`kind` tells them apart: a turn's hit has none).
 */
export interface FactSearchHit {
  kind: "fact";
  /** The fact's id (FactStore.get). */
  id: string;
  text: string;
  /** Whom it is about; null when it says no more. */
  about: string | null;
  /** When what it says was said (ms since the epoch). */
  observedAt: number;
  /** What produced it ("model:<id>", "recorded:<name>"). */
  producer: string;
  /** The messages it came from (a FactSource each: contract/facts.ts imports this file, so it is spelled out). */
  sources: { sessionId: string; messageId: string }[];
  /** Its owner, or null for a session's own fact. */
  owner: string | null;
  /** The session a fact without an owner belongs to; null for an owner's fact. */
  sessionId: string | null;
  /** Its fused relevance in this search (comparable with the turns' scores of the same search only). */
  score: number;
  /** 1-based position in the results, among the turns. */
  rank: number;
}

/** A search's result: a turn, or with `facts: "hits"` a fact too. */
export type SearchItem<M extends SessionMessage = SessionMessage> = SearchHit<M> | FactSearchHit;

/** Options of a search across sessions. */
export interface StoreSearchOptions extends SearchOptions {
  /** Restrict hits to one session. */
  sessionId?: string;
  /** Restrict hits to these sessions (with `sessionId`, to the sessions in both). */
  sessionIds?: readonly string[];
  /**
   * Restrict hits to the sessions registered with this owner (with the other options, to the sessions in both);
   * a session without a registry row or owner is no owner's. Stores without a registry find nothing for it.
   */
  owner?: string;
}
