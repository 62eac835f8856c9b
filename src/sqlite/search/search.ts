/**
 * Message search. Relevance (bm25) is ranked among the newest SEARCH_CANDIDATES matches only, so a common word
 * costs the same in a store of a million messages as in a small one; the MATCH expression comes from fts.ts
 * (word families expanded to index terms on large stores), the hits are read a page at a time (page.ts),
 * and pending rows of the batched index are indexed first (search-index.ts). The Postgres twin is
 * src/postgres/search/search.ts.
 */

import type {
  SearchHit,
  SearchItem,
  SearchResult,
  StoreSearchOptions,
  WithFactHits,
} from "../../contract/search.js";
import { keepToActivePaths } from "../../search/active-paths.js";
import { messageRecallTerms } from "../../search/date-terms.js";
import { type FactLifts, withFactHits } from "../../search/fact-fusion.js";
import { nearestFor, takesVectors } from "../../search/fusion.js";
import { rankedHits } from "../../search/hits.js";
import type { QueryLimits } from "../../search/limits.js";
import { outsideSessions, type SearchPlan, searchPlan } from "../../search/options.js";
import {
  authorsApplied,
  pageOf,
  rankText,
  recallFindsNothing,
  type ScopedRanking,
} from "../../search/pipeline.js";
import { parseQuery } from "../../search/query.js";
import type { VectorChannel } from "../../search/vectors/types.js";
import type { SqlDriver, SqlValue } from "../../sql/engines/sqlite/driver.js";
import { cannotMatch, FamilyExpander, noExpansion, toFts5 } from "../../sql/engines/sqlite/fts.js";
import { branchedSessions } from "../../sql/search/sqlite-active-paths.js";
import { searchBlinds } from "../../sql/search/sqlite-blind.js";
import { withExtras } from "../../sql/search/sqlite-extras.js";
import { filterSql } from "../../sql/search/sqlite-filters.js";
import { INDEX_FIRST, indexPendingIfWritable, matchPending } from "../../sql/search/sqlite-indexing.js";
import { type HitOptions, hitOptionsOf, pageMaySkip, readHits } from "../../sql/search/sqlite-page.js";
import { readScopedState, type SearchState, scopedMatch } from "../../sql/search/sqlite-state.js";
import { SEARCH_CANDIDATES } from "../../store/limits.js";
import { SqliteRecallSource, type TermReads } from "./candidates.js";

// bm25 over the newest SEARCH_CANDIDATES matches only; the sid column (the session token) weighs nothing.
const SCORED = "SELECT rowid AS seq, bm25(agent_messages_fts, 1.0, 0.0) AS score FROM agent_messages_fts";
// The same within one session, filtered by a primary-key lookup per match instead of the session token.
const SCORED_IN_SESSION = `SELECT f.rowid AS seq, bm25(agent_messages_fts, 1.0, 0.0) AS score
    FROM agent_messages_fts f JOIN agent_messages m ON m.seq = f.rowid`;

// The candidates' seqs, best first (ties: newest first), at most the last parameter: the newest SEARCH_CANDIDATES
// matches in a subquery, ranked outside it. Where the scope holds no more rows than SEARCH_CANDIDATES every match is
// a candidate, and one flat `ORDER BY` ranks them: the nested form sorts its rows twice (1,000 messages, same-process
// A/B: ~8 % of a search's p50). Finding the boundary first (the SEARCH_CANDIDATES-th newest match) to rank flat
// above it lost at 10,000 messages: the walk to the boundary cost what the flat ranking saved.
const nested = (scored: string, where: string) =>
  `SELECT seq, score FROM (${scored} WHERE ${where} ORDER BY seq DESC LIMIT ${SEARCH_CANDIDATES})
    ORDER BY score, seq DESC LIMIT ?`;
const flat = (scored: string, where: string) => `${scored} WHERE ${where} ORDER BY score, seq DESC LIMIT ?`;
const MATCH = "agent_messages_fts MATCH ?";
const MATCH_IN_SESSION = "agent_messages_fts MATCH ? AND m.session_num = ?";
const RANKED = { nested: nested(SCORED, MATCH), flat: flat(SCORED, MATCH) };
const RANKED_IN_SESSION = {
  nested: nested(SCORED_IN_SESSION, MATCH_IN_SESSION),
  flat: flat(SCORED_IN_SESSION, MATCH_IN_SESSION),
};
// With a condition inside the read (filters.ts: a role or time filter, the active path): the newest
// SEARCH_CANDIDATES matches are the ones it lets through, so a time range older than a word's newest matches is
// still found. bm25 is the same either way.
const filtered = (where: string) => ({
  nested: nested(SCORED_IN_SESSION, `${MATCH} AND ${where}`),
  flat: flat(SCORED_IN_SESSION, `${MATCH} AND ${where}`),
});

/** A search's text ranking and the source it was read from (undefined: nothing can match). */
interface Ranked {
  source: SqliteRecallSource;
  ranking: ScopedRanking<SearchState, TermReads> | undefined;
}

/** Cross-session and per-session message search over one connection's FTS5 index. */
export class SqliteMessageSearch {
  private readonly families: FamilyExpander;

  constructor(
    private readonly driver: SqlDriver,
    private readonly limits: QueryLimits,
    /** The store's vector channel, if it has an embedder (read per search: the store makes it after this). */
    private readonly vectors: () => VectorChannel | undefined = () => undefined,
    /** The store's fact channel for a search (search/facts.ts), undefined when it takes none. */
    private readonly facts: (query: string, plan: SearchPlan) => Promise<FactLifts | undefined> = async () =>
      undefined,
  ) {
    this.families = new FamilyExpander(driver, "agent_messages_fts");
  }

  /**
   * The hits of `query`, best first: ranked recall (search/pipeline.ts over candidates.ts) by default, or every word required
   * (`match: "all"`), with the filters, overlay marks and context the options ask for. Its reads share one
   * snapshot (two around a vector channel's answer, which is awaited).
   */
  async searchMessages(
    query: string,
    options: StoreSearchOptions | WithFactHits<StoreSearchOptions> = {},
  ): Promise<SearchItem[]> {
    // An owner is kept to inside the index, as a session is (state.ts), and by the vector channel's own read.
    const plan = searchPlan(options);
    if (typeof query !== "string") return [];
    if (plan.match === "all")
      return rankedHits(this.onSnapshot((mayIndex) => this.allWords(query, plan, mayIndex)));
    // Parsed (and so bounded) before anything else: a query over the limits is refused even with limit 0.
    const terms = messageRecallTerms(query, this.limits, undefined, plan.times);
    if (recallFindsNothing(terms, plan)) return [];
    const channel = this.vectors();
    const facts = await this.facts(query, plan);
    const vectors = takesVectors(channel, plan);
    const fused = vectors || facts !== undefined;
    const rank = (mayIndex: boolean) => {
      const source = new SqliteRecallSource(this.driver, this.families, mayIndex);
      const ranking = rankText(source, terms, plan, fused);
      return source.indexFirst ? INDEX_FIRST : { source, ranking };
    };
    // The page of a ranking, fused with the facts (their sources' rows read in the same snapshot) and the nearest.
    const page = ({ source, ranking }: Ranked, near?: number[]) => {
      if (ranking === undefined || (!fused && ranking.text.ranked.length === 0)) return [];
      const sources =
        facts &&
        source.seqsOfNow(
          facts.hits.flatMap(({ fact }) => fact.sources),
          plan,
        );
      const authored = authorsApplied(source, ranking, plan, query);
      return rankedHits(pageOf(source, authored, plan, near, facts, sources));
    };
    let hits: SearchHit[];
    if (!vectors) {
      // Ranking and page on one snapshot: nothing to await between them.
      hits = this.onSnapshot((mayIndex) => {
        const answer = rank(mayIndex);
        return answer === INDEX_FIRST ? answer : page(answer);
      });
    } else {
      // Ranked recall fused with the vector channel's nearest messages, awaited between two snapshots.
      const ranked = this.onSnapshot(rank);
      if (ranked.ranking === undefined) return [];
      const near = await nearestFor(channel, query, plan);
      hits = this.driver.read(() => page(ranked, near));
    }
    return plan.facts === "hits" && facts !== undefined ? withFactHits(hits, facts, plan.limit) : hits;
  }

  /**
   * Runs a search's reads on one snapshot. The index cannot be written inside it, so a search that finds rows
   * pending indexes them first and reads again; rows another connection commits meanwhile, or any on a connection
   * that may not write, are matched in memory.
   */
  private onSnapshot<T>(read: (mayIndex: boolean) => T | typeof INDEX_FIRST): T {
    const first = this.driver.read(() => read(true));
    if (first !== INDEX_FIRST) return first;
    indexPendingIfWritable(this.driver);
    return this.driver.read(() => read(false)) as T;
  }

  /** The page of hits of ranked seqs, with their overlay marks and context. */
  private page(seqs: readonly number[], plan: SearchPlan, options: HitOptions): SearchResult[] {
    return withExtras(this.driver, readHits(this.driver, seqs, plan.limit, options), plan);
  }

  /**
   * Every word required: bm25 among the newest SEARCH_CANDIDATES matches; a session filter goes into the FTS query
   * itself as a token, or is a primary-key lookup per match (see state.ts).
   */
  private allWords(query: string, plan: SearchPlan, mayIndex: boolean): SearchResult[] | typeof INDEX_FIRST {
    const { limit } = plan;
    // Parsed (and so bounded) before anything else: a query over the limits is refused even with limit 0.
    const terms = parseQuery(query, this.limits);
    if (terms.length === 0 || limit === 0) return [];
    if (outsideSessions(plan)) return [];
    // Every stored message is searchable: pending rows are indexed first, or matched here when this connection
    // cannot write the index (read-only), newest first ahead of the indexed matches. The watermark comes with the
    // scope in one statement (a statement each cost as much as parsing the query).
    const state = readScopedState(this.driver, plan);
    if (state === undefined) return [];
    const { scope, sessions } = state;
    // Each hit's relevance: -bm25 (FTS5's is negative, lower is better); scoreText's for a pending row.
    const scores = new Map<number, number>();
    const hitOptions = hitOptionsOf(plan, scope?.head, scores);
    const pending = state.indexed !== null && state.total > state.indexed;
    if (pending && mayIndex) return INDEX_FIRST;
    const unindexed: number[] = [];
    if (pending) {
      for (const { seq, score } of matchPending(this.driver, terms, scope?.num, plan.owner)) {
        unindexed.push(seq);
        scores.set(seq, score);
      }
    }
    const storeRows = state.total;
    // Owners in scope with a key: their sealed messages are matched by blind tokens, families as prefixes (blind.ts).
    const blinds = searchBlinds(this.driver, plan);
    const { families, maxMatches } =
      blinds.length > 0 ? noExpansion() : this.families.expand(terms, storeRows);
    // A word whose family has no indexed term, or that folds to nothing, cannot match an indexed message.
    const noMatch = terms.some((term) => cannotMatch(term, families));
    const match = scopedMatch(state, toFts5(terms, "text", families, blinds));
    if (noMatch) return this.page(unindexed, plan, hitOptions);
    // The candidates' seqs, best first. Where no hit can be skipped (all branches asked for, or no session with
    // other branches in scope), only the first `limit` of them: plucking every candidate into JavaScript cost ~10 %
    // of a one-word search's p50 at 10,000 messages, and more of its mean (common words have the most candidates).
    const count = pageMaySkip(plan, scope?.head) ? SEARCH_CANDIDATES : limit;
    // Every match is a candidate when the scope, or the word families' document counts, hold no more than
    // SEARCH_CANDIDATES: then one flat ranking walks the matches oldest first, as FTS5 stores them (two words at
    // 100,000 messages: 445 against 509 µs p50 for the newest-first walk and the second sort).
    const rows = scope === undefined ? (sessions?.rows ?? state.total) : scope.head.message_count;
    const allCandidates = Math.min(rows, maxMatches) <= SEARCH_CANDIDATES;
    const rankedSeqs = (activePaths?: readonly number[]) => {
      const { sql, params } = allWordsSql(match, scope, plan, count, activePaths);
      const rows = this.driver.tuples<[seq: number, bm25: number]>(
        allCandidates ? sql.flat : sql.nested,
        params,
      );
      return rows.map(([seq, bm25]) => {
        scores.set(seq, -bm25);
        return seq;
      });
    };
    const pageOf = (ranked: number[]) => ({
      ranked,
      hits: this.page([...unindexed, ...ranked], plan, hitOptions),
    });
    const first = pageOf(rankedSeqs());
    // Only a full window can have left hits on the active paths behind it (search/active-paths.ts).
    if (!plan.activeOnly || allCandidates || first.ranked.length < SEARCH_CANDIDATES) return first.hits;
    return keepToActivePaths(first, {
      short: ({ hits }) => hits.length < limit,
      crowding: ({ ranked }) => branchedSessions(this.driver, scope, { seqs: ranked }),
      reread: (activePaths) => pageOf(rankedSeqs(activePaths)),
    }).hits;
  }
}

/**
 * The all-words ranking's statements and parameters: kept to a session by lookup, to the filters and sessions to
 * their active paths (`activePaths`), or to none of them.
 */
function allWordsSql(
  match: string,
  scope: SearchState["scope"],
  plan: SearchPlan,
  count: number,
  activePaths?: readonly number[],
): { sql: { nested: string; flat: string }; params: SqlValue[] } {
  const lookup = scope?.filter === "lookup" ? scope.num : undefined;
  const filter = filterSql(plan, { sessionNum: lookup, activePaths });
  if (filter !== undefined) return { sql: filtered(filter.where), params: [match, ...filter.params, count] };
  return lookup === undefined
    ? { sql: RANKED, params: [match, count] }
    : { sql: RANKED_IN_SESSION, params: [match, lookup, count] };
}
