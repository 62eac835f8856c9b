/**
 * Ranked recall's source on SQLite (search/pipeline.ts runs the steps): each content term of the query finds its
 * newest matches in the FTS5 index (at most perTermCap of them) with their parents, sessions and lengths, one
 * statement per term that reads the index's doclists and a covering index of the messages (term-matches.ts);
 * weights.ts weighs them (BM25), and search/rank.ts ranks them. FTS5's own bm25() was the first choice, but it costs
 * ~1 µs per matching row and term, which made a LoCoMo question ~2 ms; the weights here take a term's rarity from
 * its match count and a message's length from its token estimate, and found as much (R@5/R@10 within 0.5 points on
 * the dev set). The Postgres twin is src/postgres/search/candidates.ts.
 */

import type { FactSource } from "../../contract/facts.js";
import type { SearchResult } from "../../contract/search.js";
import { storedMessageAuthor } from "../../message/author.js";
import { timeTermCount } from "../../search/date-terms.js";
import { factSourceKey } from "../../search/fact-fusion.js";
import { activePathLength } from "../../search/on-path.js";
import { hasFilters, passesFilters, type SearchPlan } from "../../search/options.js";
import type { ActivePathRereads, RecallSource, ScoreLookup, TextRanking } from "../../search/pipeline.js";
import type { QueryTerm } from "../../search/query.js";
import { perTermCap, type RankedCandidate } from "../../search/rank.js";
import { termFrequencies } from "../../search/score.js";
import { contentSql, resolveContent } from "../../sql/engines/sqlite/chunks.js";
import type { SqlDriver } from "../../sql/engines/sqlite/driver.js";
import { type FamilyExpander, noExpansion } from "../../sql/engines/sqlite/fts.js";
import { branchedSessions } from "../../sql/search/sqlite-active-paths.js";
import { searchBlinds } from "../../sql/search/sqlite-blind.js";
import { withExtras } from "../../sql/search/sqlite-extras.js";
import { filterSql } from "../../sql/search/sqlite-filters.js";
import { pendingTexts } from "../../sql/search/sqlite-indexing.js";
import {
  type HitHead,
  headBranched,
  hitOptionsOf,
  onActivePaths,
  pageMaySkip,
  readHits,
} from "../../sql/search/sqlite-page.js";
import { readScopedState, type SearchState } from "../../sql/search/sqlite-state.js";
import { SEARCH_CANDIDATES } from "../../store/limits.js";
import { termMatches, withFiltered } from "./term-matches.js";
import { Candidates, type MatchNodes, matchSessions, NODE_FIELDS, readNodes } from "./weights.js";

const HEADS = `SELECT h.session_id, h.num AS session_num, h.leaf_seq, l.depth AS leaf_depth, h.message_count
  FROM json_each(?) j JOIN agent_session_heads h ON h.num = j.value LEFT JOIN agent_messages l ON l.seq = h.leaf_seq`;

// The stored JSON of messages by seq (a JSON array) that may name an author, with their session's id (a sealed row
// opens with its key): a row in clear without the key "author" brings no JSON at all.
const AUTHORS = `SELECT m.seq, m.id, CASE WHEN m.chunks = 0 AND substr(m.content, 1, 1) = '{'
    AND instr(m.content, '"author"') = 0 THEN NULL ELSE ${contentSql("m")} END AS content, h.session_id
  FROM json_each(?) j JOIN agent_messages m ON m.seq = j.value JOIN agent_session_heads h ON h.num = m.session_num`;

/** Each term's candidates read for one search, and what reading them again with a condition needs. */
export interface TermReads {
  /** Each term's matches with their nodes. */
  matches: MatchNodes[];
  /** Each term's FTS5 match where its newest matches filled its window (term-matches.ts), else undefined. */
  windows: (string | undefined)[];
  cap: number;
  /** The session a lookup keeps to (state.ts). */
  sessionNum: number | undefined;
  /** How many leading terms are the query's time (search/date-terms.ts, rank.ts). */
  lifts: number;
}

// A search's fact sources of one session (their ids a JSON array): the session's number by its head, then the
// (session_num, id) unique index probed once per id.
const SOURCE_SEQS = `SELECT m.seq, m.id FROM agent_session_heads h JOIN agent_messages m ON m.session_num = h.num
  WHERE h.session_id = ? AND m.id IN (SELECT value FROM json_each(?))`;
// The same, when the session is registered with the owner searched.
const OWNED_SOURCE_SEQS = `SELECT m.seq, m.id FROM agent_session_heads h JOIN agent_messages m ON m.session_num = h.num
  JOIN agent_sessions s ON s.id = h.session_id
  WHERE h.session_id = ? AND m.id IN (SELECT value FROM json_each(?)) AND s.owner = ?`;
// Both with the session's head, for an active-branch search's path check (its leaf's depth by the primary key).
const SOURCES_ON_PATH = `SELECT m.seq, m.id, h.session_id, h.num, h.leaf_seq, l.depth, h.message_count
  FROM agent_session_heads h JOIN agent_messages m ON m.session_num = h.num
    LEFT JOIN agent_messages l ON l.seq = h.leaf_seq WHERE h.session_id = ? AND m.id IN (SELECT value FROM json_each(?))`;
const OWNED_SOURCES_ON_PATH = `SELECT m.seq, m.id, h.session_id, h.num, h.leaf_seq, l.depth, h.message_count
  FROM agent_session_heads h JOIN agent_messages m ON m.session_num = h.num JOIN agent_sessions s ON s.id = h.session_id
    LEFT JOIN agent_messages l ON l.seq = h.leaf_seq
  WHERE h.session_id = ? AND m.id IN (SELECT value FROM json_each(?)) AND s.owner = ?`;
type SourceRow = [
  seq: number,
  id: string,
  sessionId: string,
  num: number,
  leaf: number | null,
  leafDepth: number | null,
  count: number,
];

/**
 * The candidates of one snapshot's search. Rows the index does not hold yet are matched in memory, or with
 * `mayIndex` the scope is refused and `indexFirst` set: the caller indexes them and asks again on a new snapshot.
 */
export class SqliteRecallSource implements RecallSource<SearchState, TermReads, SearchResult[]> {
  /** Set when the scope was refused because rows are pending and this snapshot may index them first. */
  indexFirst = false;

  constructor(
    private readonly driver: SqlDriver,
    private readonly expander: FamilyExpander,
    private readonly mayIndex: boolean,
  ) {}

  scope(plan: SearchPlan): SearchState | undefined {
    const state = readScopedState(this.driver, plan);
    if (state === undefined) return undefined;
    if (this.mayIndex && state.indexed !== null && state.total > state.indexed) {
      this.indexFirst = true;
      return undefined;
    }
    return state;
  }

  pageMaySkip(plan: SearchPlan, state: SearchState): boolean {
    return pageMaySkip(plan, state.scope?.head);
  }

  read(terms: QueryTerm[], state: SearchState, plan: SearchPlan): TermReads {
    return readTerms(this.driver, this.expander, terms, plan, state);
  }

  rank(reads: TermReads, state: SearchState, plan: SearchPlan, top: number | undefined): TextRanking {
    return rankReads(this.driver, reads, plan, state, top);
  }

  /**
   * The rows of a search's fact sources that are in its scope (its session, its set, the owner's), by
   * `factSourceKey`: one statement per session named, the sessions' unique index probed per id; in an
   * active-branch search, only those on their session's active path (with the session's head, and one path check
   * of them all where the session has other branches), as the memory backend's scope holds only the paths' rows
   * (docs/FACTS.md#recall). One lookup per source cost a fused LoCoMo question 15 statements.
   */
  seqsOfNow(sources: readonly FactSource[], plan: SearchPlan): Map<string, number> {
    const bySession = new Map<string, Set<string>>();
    for (const { sessionId, messageId } of sources) {
      if (plan.sessionId !== undefined && plan.sessionId !== sessionId) continue;
      if (plan.sessionIds !== undefined && !plan.sessionIds.has(sessionId)) continue;
      const ids = bySession.get(sessionId) ?? new Set<string>();
      bySession.set(sessionId, ids.add(messageId));
    }
    const found = new Map<string, number>();
    const onPath: [number, SourceRow][] = [];
    for (const [sessionId, ids] of bySession) {
      const params = [sessionId, JSON.stringify([...ids]), ...(plan.owner === undefined ? [] : [plan.owner])];
      if (!plan.activeOnly) {
        const sql = plan.owner === undefined ? SOURCE_SEQS : OWNED_SOURCE_SEQS;
        for (const [seq, id] of this.driver.tuples<[number, string]>(sql, params))
          found.set(factSourceKey({ sessionId, messageId: id }), seq);
        continue;
      }
      const sql = plan.owner === undefined ? SOURCES_ON_PATH : OWNED_SOURCES_ON_PATH;
      for (const row of this.driver.tuples<SourceRow>(sql, params)) onPath.push([row[0], row]);
    }
    if (onPath.length === 0) return found;
    const on = onActivePaths(this.driver, onPath, headOf);
    for (const [seq, [, id, sessionId]] of onPath)
      if (on.has(seq)) found.set(factSourceKey({ sessionId, messageId: id }), seq);
    return found;
  }

  /**
   * The authors of `seqs` (message/author.ts) from their stored JSON in one statement, sealed content opened with
   * its owner's key as the page's is (search/authors.ts).
   */
  authorsOf(seqs: readonly number[]): Map<number, string> {
    const authors = new Map<number, string>();
    const rows = this.driver.tuples<[seq: number, id: string, content: unknown, sessionId: string]>(AUTHORS, [
      JSON.stringify(seqs),
    ]);
    for (const [seq, id, content, sessionId] of rows) {
      const author = storedMessageAuthor(resolveContent(this.driver, content, sessionId, id));
      if (author !== undefined) authors.set(seq, author);
    }
    return authors;
  }

  page(seqs: readonly number[], scores: ScoreLookup, plan: SearchPlan, state: SearchState): SearchResult[] {
    const hits = readHits(this.driver, seqs, plan.limit, hitOptionsOf(plan, state.scope?.head, scores));
    return withExtras(this.driver, hits, plan);
  }

  readonly rereads: ActivePathRereads<SearchState, TermReads, TermReads> = {
    full: ({ windows }) => windows.some((match) => match !== undefined),
    found: (_reads, { ranked }, plan) => passing(this.driver, plan, ranked),
    branched: ({ matches }, state) =>
      branchedSessions(this.driver, state.scope, { sessions: matchSessions(matches) }),
    // Only a term whose newest matches filled its window reads again: the others hold every match.
    reread: (reads, _state, plan, activePaths) => {
      const onPaths = filterSql(plan, { sessionNum: reads.sessionNum, activePaths });
      const matches = reads.matches.map((nodes, i) => {
        const match = reads.windows[i];
        return match === undefined || onPaths === undefined
          ? nodes
          : withFiltered(this.driver, nodes, match, reads.cap, onPaths);
      });
      return { ...reads, matches };
    },
  };
}

/** A fact source row's session head, for the path check. */
function headOf([, , session_id, session_num, leaf_seq, leaf_depth, message_count]: SourceRow): HitHead {
  return { session_id, session_num, leaf_seq, leaf_depth, message_count };
}

/** Each term's candidates in the scope `state`, with the rows the index does not hold yet matched in memory. */
function readTerms(
  driver: SqlDriver,
  expander: FamilyExpander,
  terms: QueryTerm[],
  plan: SearchPlan,
  state: SearchState,
): TermReads {
  const pending = state.indexed !== null && state.total > state.indexed;
  // Word families are read from the index's vocabulary, which holds blind tokens by no word: with any owner's
  // blind tokens in scope, a family stays a prefix query (in clear and blind alike).
  const blinds = searchBlinds(driver, plan);
  const { families } = blinds.length > 0 ? noExpansion() : expander.expand(terms, state.total);
  // A query's times take no share of its words' budget: its words read as many matches as without them.
  const lifts = timeTermCount(terms);
  const cap = perTermCap(terms.length - lifts, SEARCH_CANDIDATES);
  const sessionNum = state.scope?.filter === "lookup" ? state.scope.num : undefined;
  const filter = filterSql(plan, { sessionNum });
  const reads = terms.map((term) => termMatches(driver, term, families, state, cap, filter, blinds));
  const matches = reads.map(({ nodes }) => nodes);
  const pendingMatches = pending
    ? pendingTermMatches(driver, terms, state.scope?.num, plan.owner)
    : undefined;
  if (pendingMatches !== undefined) addPending(driver, matches, pendingMatches);
  return { matches, windows: reads.map(({ full }) => full), cap, sessionNum, lifts };
}

/** The candidates read, weighed and ranked (only the first `top` in order). */
function rankReads(
  driver: SqlDriver,
  { matches, lifts }: TermReads,
  plan: SearchPlan,
  state: SearchState,
  top: number | undefined,
): TextRanking {
  // A search that matches nothing builds no candidates (their typed arrays cost a search with cold caches ~5 µs).
  if (matches.every((nodes) => nodes.length === 0)) return { ranked: [], scores: new Map() };
  // Sessions without messages lacking text have no run to pass through (a store-wide search looks always).
  const textless = state.scope?.textless ?? state.sessions?.textless ?? true;
  const candidates = new Candidates(matches);
  if (textless) candidates.passTextless(driver, state.indexed ?? 0);
  return candidates.rank(documentCount(plan, state), visibility(driver, plan, state, candidates), top, lifts);
}

/**
 * The documents a term's rarity is taken among: the session's messages, only its active path's in an active-branch
 * search (so a branch the conversation left changes no weight); the store's message count for several sessions.
 */
function documentCount(plan: SearchPlan, { scope, total }: SearchState): number {
  if (scope === undefined) return total;
  const { head } = scope;
  if (!plan.activeOnly) return head.message_count;
  return activePathLength(head.leaf_seq, head.leaf_depth);
}

/**
 * How many of the ranked candidates a role or time filter lets through: the page leaves the others out (page.ts),
 * so an active-branch search counts only these when it asks whether its window held enough.
 */
function passing(driver: SqlDriver, plan: SearchPlan, ranked: readonly RankedCandidate[]): number {
  if (!hasFilters(plan)) return ranked.length;
  const rows = driver.tuples<[string, string]>(
    "SELECT m.role, m.created_at FROM json_each(?) j JOIN agent_messages m ON m.seq = j.value",
    [JSON.stringify(ranked.map(({ seq }) => seq))],
  );
  return rows.filter(([role, createdAt]) => passesFilters(plan, role, createdAt)).length;
}

/**
 * Which candidates a search may see, or undefined for all: matches of other sessions (a session kept to by its
 * rows), hits outside the named sessions, and off the active path of their session when the search keeps to it.
 * Only sessions with other branches need their paths checked.
 */
function visibility(
  driver: SqlDriver,
  plan: SearchPlan,
  { scope }: SearchState,
  nodes: Candidates,
): ((seq: number) => boolean) | undefined {
  if (scope !== undefined) {
    const checkPath = plan.activeOnly && headBranched(scope.head);
    if (scope.filter !== "lookup" && !checkPath) return undefined;
    const onPath = checkPath
      ? onActivePaths(driver, nodes.entries(), (num) => (num === scope.num ? scope.head : undefined))
      : undefined;
    return (seq) => nodes.sessionOf(seq) === scope.num && (onPath === undefined || onPath.has(seq));
  }
  if (!plan.activeOnly && plan.sessionIds === undefined) return undefined;
  const heads = new Map<number, HitHead>();
  for (const head of driver.all<HitHead>(HEADS, [JSON.stringify([...nodes.sessions()])]))
    heads.set(head.session_num, head);
  const onPath = plan.activeOnly
    ? onActivePaths(driver, nodes.entries(), (num) => heads.get(num))
    : undefined;
  return (seq) => {
    const num = nodes.sessionOf(seq);
    const head = num === undefined ? undefined : heads.get(num);
    if (head === undefined) return false;
    if (plan.sessionIds !== undefined && !plan.sessionIds.has(head.session_id)) return false;
    return onPath === undefined || onPath.has(seq);
  };
}

// The pending rows' matches join each term's list (they are newer than every indexed row), with their nodes.
function addPending(driver: SqlDriver, matches: MatchNodes[], pending: ReadonlyMap<number, number[]>): void {
  if (pending.size === 0) return;
  const nodes = readNodes(driver, [...pending.keys()]);
  for (let k = 0; k < nodes.length; k += NODE_FIELDS) {
    const node = nodes.slice(k, k + NODE_FIELDS);
    pending.get(node[0] as number)?.forEach((n, i) => {
      if (n > 0) matches[i]!.unshift(...node);
    });
  }
}

/**
 * Rows the index does not hold yet, matched in memory, where the search does not index them first (a read-only
 * connection, or rows committed by another one while this one indexed): at most a batch or two, of `owner`'s
 * sessions only when the search keeps to an owner. seq → each term's
 * frequency in the row.
 */
function pendingTermMatches(
  driver: SqlDriver,
  terms: QueryTerm[],
  sessionNum: number | undefined,
  owner: string | undefined,
): Map<number, number[]> {
  const found = new Map<number, number[]>();
  for (const { seq, text } of pendingTexts(driver, sessionNum, owner)) {
    const { tf } = termFrequencies(terms, text);
    if (tf.some((n) => n > 0)) found.set(seq, tf);
  }
  return found;
}
