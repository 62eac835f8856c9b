/**
 * Message search. Relevance (bm25) is ranked among the newest SEARCH_CANDIDATES matches only, so a common word
 * costs the same in a store of a million messages as in a small one; the MATCH expression comes from fts.ts
 * (word families expanded to index terms on large stores), the hits are read a page at a time (search-hits.ts),
 * and pending rows of the batched index are indexed first (search-index.ts). The Postgres twin is
 * src/postgres/search.ts.
 */
import { canBeStored } from "../message.js";
import type { QueryLimits } from "../search/limits.js";
import { parseQuery } from "../search/query.js";
import { SEARCH_CANDIDATES, searchBranch, searchLimit } from "../store/limits.js";
import type { StoreSearchOptions } from "../store/types.js";
import type { SearchResult } from "../types.js";
import type { SqlDriver } from "./driver.js";
import { FamilyExpander, foldsToNothing, toFts5 } from "./fts.js";
import { type HitHead, hasOtherBranches, readHits } from "./search-hits.js";
import { indexPendingIfWritable, matchPending } from "./search-index.js";

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
  `SELECT seq FROM (${scored} WHERE ${where} ORDER BY seq DESC LIMIT ${SEARCH_CANDIDATES})
    ORDER BY score, seq DESC LIMIT ?`;
const flat = (scored: string, where: string) => `${scored} WHERE ${where} ORDER BY score, seq DESC LIMIT ?`;
const MATCH = "agent_messages_fts MATCH ?";
const MATCH_IN_SESSION = "agent_messages_fts MATCH ? AND m.session_num = ?";
const RANKED = { nested: nested(SCORED, MATCH), flat: flat(SCORED, MATCH) };
const RANKED_IN_SESSION = {
  nested: nested(SCORED_IN_SESSION, MATCH_IN_SESSION),
  flat: flat(SCORED_IN_SESSION, MATCH_IN_SESSION),
};

/** What a search needs to know first: the store's size (highest seq), the index watermark, the session's scope. */
interface SearchState {
  total: number;
  indexed: number | null;
  scope: { num: number; filter: "none" | "lookup" | "token"; head: HitHead } | undefined;
}

/** Cross-session and per-session message search over one connection's FTS5 index. */
export class SqliteMessageSearch {
  private readonly families: FamilyExpander;

  constructor(
    private readonly driver: SqlDriver,
    private readonly limits: QueryLimits,
  ) {
    this.families = new FamilyExpander(driver, "agent_messages_fts");
  }

  /**
   * The hits of `query`, best first: bm25 among the newest SEARCH_CANDIDATES matches; a session filter goes into
   * the FTS query itself as a token, or is a primary-key lookup per match (see searchState).
   */
  async searchMessages(query: string, options: StoreSearchOptions = {}): Promise<SearchResult[]> {
    const limit = searchLimit(options.limit);
    const branch = searchBranch(options.branch);
    if (typeof query !== "string") return [];
    // Parsed (and so bounded) before anything else: a query over the limits is refused even with limit 0.
    const terms = parseQuery(query, this.limits);
    if (terms.length === 0 || limit === 0) return [];
    // Every stored message is searchable: pending rows are indexed first, or matched here when this connection
    // cannot write the index (read-only), newest first ahead of the indexed matches. The watermark comes with the
    // scope in one statement (a statement each cost as much as parsing the query).
    const state = this.searchState(options.sessionId);
    if (state === undefined) return [];
    const { scope } = state;
    const pending = state.indexed !== null && state.total > state.indexed;
    const indexed = !pending || indexPendingIfWritable(this.driver);
    const unindexed = indexed ? [] : matchPending(this.driver, terms, scope?.num);
    const storeRows = state.total;
    const { families, maxMatches } = this.families.expand(terms, storeRows);
    // A word whose family has no indexed term, or that folds to nothing, cannot match an indexed message.
    const noMatch = foldsToNothing(terms) || [...families.values()].some((family) => family.length === 0);
    let match = toFts5(terms, "text", families);
    if (scope?.filter === "token") match = `sid : "s${scope.num}" AND ${match}`;
    if (noMatch) return readHits(this.driver, unindexed, limit, branch === "active", scope?.head);
    // The candidates' seqs, best first. Where no hit can be skipped (all branches asked for, or no session with
    // other branches in scope), only the first `limit` of them: plucking every candidate into JavaScript cost ~10 %
    // of a one-word search's p50 at 10,000 messages, and more of its mean (common words have the most candidates).
    const skips = branch === "active" && (scope === undefined || hasOtherBranches(scope.head));
    const count = skips ? SEARCH_CANDIDATES : limit;
    // Every match is a candidate when the scope, or the word families' document counts, hold no more than
    // SEARCH_CANDIDATES: then one flat ranking walks the matches oldest first, as FTS5 stores them (two words at
    // 100,000 messages: 445 against 509 µs p50 for the newest-first walk and the second sort).
    const rows = scope === undefined ? state.total : scope.head.message_count;
    const allCandidates = Math.min(rows, maxMatches) <= SEARCH_CANDIDATES;
    const sql = scope?.filter === "lookup" ? RANKED_IN_SESSION : RANKED;
    const params = scope?.filter === "lookup" ? [match, scope.num, count] : [match, count];
    const ranked = this.driver.column<number>(allCandidates ? sql.flat : sql.nested, params);
    return readHits(this.driver, [...unindexed, ...ranked], limit, branch === "active", scope?.head);
  }

  /**
   * How a search is kept to one session (undefined: the session has no messages). The session token in the FTS
   * query lets FTS5 skip other sessions' matches, but bm25 then counts the documents of the token as well — a
   * walk over every message of the session on each query: in a store that is mostly one session (a Durable
   * Object, an everyday single-conversation file) a scoped search cost 5× a store-wide one (8.3 ms against
   * 1.3 ms at 10,000 messages). So: a session alone in the store needs no filter at all; one holding at least
   * three quarters of the rows is filtered by a primary-key lookup per match (other sessions then hold at most a
   * third as many rows, so the lookups never cost much more than that walk); any other keeps the token. The
   * candidates and scores are the same either way. Read with the store's size and the index watermark, in one
   * statement; undefined when the session is not stored (nothing to search).
   */
  private searchState(sessionId: string | undefined): SearchState | undefined {
    if (sessionId === undefined) {
      const row = this.driver.get<{ total: number; indexed: number | null }>(
        `SELECT IFNULL(MAX(seq), 0) AS total, (SELECT indexed_seq FROM agent_search_state WHERE id = 1) AS indexed
         FROM agent_messages`,
      );
      return { total: row?.total ?? 0, indexed: row?.indexed ?? null, scope: undefined };
    }
    // A session id no head can have is not looked up: better-sqlite3 13 binds a lone surrogate as U+FFFD, which
    // would find another tenant's session (see sessionNum).
    if (!canBeStored(sessionId)) return undefined;
    // The head's leaf comes along for the hits (search-hits.ts), which then read only the messages' own columns.
    const [row] = this.driver.tuples<
      [
        num: number,
        count: number,
        leafSeq: number | null,
        leafDepth: number | null,
        total: number,
        indexed: number | null,
        alone: number,
      ]
    >(
      `SELECT h.num, h.message_count AS count, h.leaf_seq, l.depth AS leaf_depth,
         (SELECT IFNULL(MAX(seq), 0) FROM agent_messages) AS total,
         (SELECT indexed_seq FROM agent_search_state WHERE id = 1) AS indexed,
         NOT EXISTS (SELECT 1 FROM agent_session_heads o WHERE o.num <> h.num AND o.message_count > 0) AS alone
       FROM agent_session_heads h LEFT JOIN agent_messages l ON l.seq = h.leaf_seq WHERE h.session_id = ?`,
      [sessionId],
    );
    if (!row) return undefined;
    const [num, count, leafSeq, leafDepth, total, indexed, alone] = row;
    const filter = alone === 1 ? "none" : count * 4 >= total * 3 ? "lookup" : "token";
    const head: HitHead = {
      session_id: sessionId,
      session_num: num,
      leaf_seq: leafSeq,
      leaf_depth: leafDepth,
      message_count: count,
    };
    return { total, indexed, scope: { num, filter, head } };
  }
}
