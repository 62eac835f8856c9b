/**
 * One term's matches for ranked recall on SQLite (candidates.ts ranks them): its newest matches within the search's
 * scope, each with its parent, session and length, read from the FTS5 doclist and a covering index in one
 * statement; and, where those newest matches fill the term's window, its newest matches that pass a condition
 * (filters.ts: a role or time filter, the active path) in one more.
 */
import type { BlindTokens } from "../../search/blind-tokens.js";
import type { QueryTerm } from "../../search/query.js";
import type { SqlDriver, SqlValue } from "../../sql/engines/sqlite/driver.js";
import { cannotMatch, toFts5 } from "../../sql/engines/sqlite/fts.js";
import { type FilterSql, sessionFilter } from "../../sql/search/sqlite-filters.js";
import { type SearchState, scopedMatch } from "../../sql/search/sqlite-state.js";
import { type MatchNodes, matchNodesJson, NODE_FIELDS } from "./weights.js";

// One term's newest matches; or all of them, in the index's own order, where no more can match than the cap (FTS5
// walks a doclist oldest first: the reverse walk and the limit cost ~20 % of a LoCoMo question's term reads).
const TERM_MATCHES = `SELECT rowid FROM agent_messages_fts WHERE agent_messages_fts MATCH ? ORDER BY rowid DESC LIMIT ?`;
const ALL_TERM_MATCHES = "SELECT rowid FROM agent_messages_fts WHERE agent_messages_fts MATCH ?";
const FIRST_TERM_MATCHES = "SELECT rowid FROM agent_messages_fts WHERE agent_messages_fts MATCH ? LIMIT ?";
// A term's matches with their parents, sessions and lengths (MatchNodes, as one JSON value), read from the covering
// index in the same statement. A statement of their own for all the candidates at once read a candidate that several
// terms match only once, but cost more: a LoCoMo question's p50 fell ~7 % with this (same-process A/B, same hits).
// A match no longer stored drops out.
function withNodes(matches: string): string {
  return `SELECT ${matchNodesJson("t.rowid")}
    FROM (${matches}) t CROSS JOIN agent_messages m INDEXED BY agent_messages_node ON m.seq = t.rowid`;
}
const TERM_NODES = withNodes(TERM_MATCHES);
const ALL_TERM_NODES = withNodes(ALL_TERM_MATCHES);
const FIRST_TERM_NODES = withNodes(FIRST_TERM_MATCHES);
// One term's newest matches that pass a condition (filters.ts).
const filteredTermNodes = (where: string) =>
  withNodes(`SELECT f.rowid FROM agent_messages_fts f JOIN agent_messages m ON m.seq = f.rowid
    WHERE agent_messages_fts MATCH ? AND ${where} ORDER BY f.rowid DESC LIMIT ?`);
/** A term's matches with their nodes, and its FTS5 match where its newest matches filled the window. */
export interface TermRead {
  nodes: MatchNodes;
  /** Set when older matches were left out: the match to read the ones a condition asks for (withFiltered). */
  full?: string;
}

/**
 * One term's newest matches within the search's scope (at most `cap`) with their nodes (see withNodes): newest
 * first, or in the index's own order where every match fits under the cap. With a role or time filter, a term
 * whose newest matches fill the cap also brings the filter's own newest matches (see withFiltered). `blinds`: the
 * owners in scope whose sealed messages the index holds as blind tokens (blind.ts).
 */
export function termMatches(
  driver: SqlDriver,
  term: QueryTerm,
  families: ReadonlyMap<string, readonly string[]>,
  state: SearchState,
  cap: number,
  filter: FilterSql | undefined,
  blinds: readonly BlindTokens[] = [],
): TermRead {
  // A word whose family has no indexed term, or that folds to nothing, matches no indexed message.
  if (cannotMatch(term, families)) return { nodes: [] };
  // A session holding most of the store is kept to by its rows' session (read with the candidates' parents):
  // its token's doclist would be nearly the whole index. Any other is kept to by its token inside the index.
  const match = scopedMatch(state, toFts5([term], "text", families, blinds));
  // `total` (the highest seq) bounds the rows of the store, a session's (or a set's) count the rows its tokens
  // let through.
  const { scope, sessions, total } = state;
  const mostMatches = scope?.filter === "token" ? scope.head.message_count : (sessions?.rows ?? total);
  if (mostMatches <= cap) return { nodes: nodesOf(driver, ALL_TERM_NODES, [match]) };
  // A phrase seldom matches more than the cap: its matches in the index's order, and only when there are more, the
  // newest (a common phrase then costs at most two bounded reads; a phrase at 10,000 messages: ~30 % less).
  if (term.kind === "phrase") {
    const first = nodesOf(driver, FIRST_TERM_NODES, [match, cap + 1]);
    if (first.length <= cap * NODE_FIELDS) return { nodes: first };
  }
  const newest = nodesOf(driver, TERM_NODES, [match, cap]);
  if (newest.length < cap * NODE_FIELDS) return { nodes: newest };
  // A session kept to by a lookup (no filter): where other sessions' newer matches took part of the window, its
  // own older ones come from a read kept to it, or a term whose newest matches lie elsewhere found none of them.
  const keep =
    filter ??
    (scope?.filter === "lookup" && holdsOthers(newest, scope.num) ? sessionFilter(scope.num) : undefined);
  return { nodes: keep === undefined ? newest : withFiltered(driver, newest, match, cap, keep), full: match };
}

// Whether any of `nodes` belongs to a session other than `num`.
function holdsOthers(nodes: MatchNodes, num: number): boolean {
  for (let k = 2; k < nodes.length; k += NODE_FIELDS) if (nodes[k] !== num) return true;
  return false;
}

/**
 * A term's matches so far (`newest`, which fill the cap) and, after them, its newest matches that pass the
 * condition. A filter picks among the ranked candidates, after the turns it leaves out have lent their weight to
 * their neighbours (and an active-branch search leaves off-path turns out of the ranking); but where a term's
 * newest matches fill the window, the ones asked for may all be older (a time range behind them, a role they hold
 * none of, an active path that other branches' newer turns outnumber), and only these find them.
 */
export function withFiltered(
  driver: SqlDriver,
  newest: MatchNodes,
  match: string,
  cap: number,
  filter: FilterSql,
): MatchNodes {
  const passing = nodesOf(driver, filteredTermNodes(filter.where), [match, ...filter.params, cap]);
  const seen = new Set<number | null>();
  for (let k = 0; k < newest.length; k += NODE_FIELDS) seen.add(newest[k]!);
  const merged = newest.slice();
  for (let k = 0; k < passing.length; k += NODE_FIELDS) {
    if (!seen.has(passing[k]!)) merged.push(...passing.slice(k, k + NODE_FIELDS));
  }
  return merged;
}

function nodesOf(driver: SqlDriver, sql: string, params: SqlValue[]): MatchNodes {
  const [json] = driver.column<string | null>(sql, params);
  return json ? (JSON.parse(json) as MatchNodes) : [];
}
