/**
 * Ranked recall, the default search of every backend: the query's content words (stop words dropped, quoted
 * phrases kept whole) each find their candidates, and the candidates are ranked here, the same way on every
 * backend. A backend supplies, per content term, the messages it matches with a relevance weight (BM25-like: rarer
 * terms weigh more, long messages do not win by length), and each candidate's parent; this module does the rest.
 *
 * Ranking, best first:
 * 1. how many of the query's terms the message and the turns next to it (its parent and its replies) match
 *    together — a conversation's answer is often the turn after the question that names the subject;
 * 2. how many of them the message matches by itself (so a message matching every term comes first);
 * 3. relevance: the message's own weight plus half the best weight among those neighbouring turns;
 * 4. newest first.
 */
import type { QueryLimits } from "./limits.js";
import { parseQuery, type QueryTerm } from "./query.js";
import { isStopWord } from "./stopwords.js";

/** Weight of the best neighbouring turn's relevance in a message's own (a reply carries half its question's). */
export const NEIGHBOUR_WEIGHT = 0.5;

/**
 * The content terms of `query` for ranked recall: its parsed terms without stop words (a quoted phrase is always
 * kept). Bounded like every query (see parseQuery); an empty list means nothing to search for.
 */
export function recallTerms(query: string, limits?: QueryLimits): QueryTerm[] {
  return parseQuery(query, limits).filter((term) => term.kind === "phrase" || !isStopWord(term.word));
}

/** The messages one term matches: seq → relevance weight (> 0, higher is better). */
export type TermMatches = ReadonlyMap<number, number>;

/** A ranked candidate. */
export interface RankedCandidate {
  seq: number;
  /** Relevance used for ordering within equal term counts (own weight plus the neighbour share). */
  score: number;
  /** Query terms this message matches by itself. */
  matched: number;
}

/** Which candidates take part: `visible` ones at all (a branch outside the search is not), `returnable` ones as hits. */
export interface CandidateFilter {
  /** False for a message outside the search's branch scope: it is neither returned nor a neighbour. */
  visible?: (seq: number) => boolean;
  /** False for a message the filters (role, time) leave out: it still lends its weight to its neighbours. */
  returnable?: (seq: number) => boolean;
}

/**
 * Ranks candidates (see the module comment). `parentOf` gives a candidate's parent seq (null for a root).
 * Cost: O(candidates × terms).
 */
export function rankCandidates(
  perTerm: readonly TermMatches[],
  parentOf: (seq: number) => number | null | undefined,
  { visible, returnable }: CandidateFilter = {},
): RankedCandidate[] {
  // Terms as bits of a mask (a query has at most a few dozen distinct terms; past 31, later ones share the top
  // bit, which only makes the term counts of such a query coarser).
  const weight = new Map<number, number>();
  const mask = new Map<number, number>();
  perTerm.forEach((matches, term) => {
    const bit = 1 << Math.min(term, 30);
    for (const [seq, w] of matches) {
      if (visible !== undefined && !visible(seq)) continue;
      weight.set(seq, (weight.get(seq) ?? 0) + w);
      mask.set(seq, (mask.get(seq) ?? 0) | bit);
    }
  });
  // Each candidate's best neighbour weight and the union of its neighbours' terms, from parent-child pairs.
  const nearWeight = new Map<number, number>();
  const nearMask = new Map<number, number>();
  const lend = (to: number, from: number) => {
    const w = weight.get(from)!;
    if (w > (nearWeight.get(to) ?? 0)) nearWeight.set(to, w);
    nearMask.set(to, (nearMask.get(to) ?? 0) | mask.get(from)!);
  };
  for (const seq of weight.keys()) {
    const parent = parentOf(seq);
    if (parent === null || parent === undefined || !weight.has(parent)) continue;
    lend(seq, parent);
    lend(parent, seq);
  }
  const ranked: { seq: number; score: number; matched: number; window: number }[] = [];
  for (const [seq, own] of weight) {
    if (returnable !== undefined && !returnable(seq)) continue;
    const bits = mask.get(seq)!;
    ranked.push({
      seq,
      score: own + NEIGHBOUR_WEIGHT * (nearWeight.get(seq) ?? 0),
      matched: popcount(bits),
      window: popcount(bits | (nearMask.get(seq) ?? 0)),
    });
  }
  ranked.sort((a, b) => b.window - a.window || b.matched - a.matched || b.score - a.score || b.seq - a.seq);
  return ranked;
}

function popcount(bits: number): number {
  let v = bits - ((bits >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** BM25's term saturation and length normalisation (k1 = 1.2, b = 0.75), the defaults of Lucene and FTS5. */
export function bm25Weight(idf: number, tf: number, length: number, averageLength: number): number {
  const k1 = 1.2;
  const b = 0.75;
  const norm = averageLength > 0 ? length / averageLength : 1;
  return (idf * (tf * (k1 + 1))) / (tf + k1 * (1 - b + b * norm));
}

/** BM25's inverse document frequency (never below a small positive floor, so a common word still counts). */
export function idf(documents: number, matching: number): number {
  return Math.max(1e-6, Math.log(1 + (documents - matching + 0.5) / (matching + 0.5)));
}

/** How many candidates one term may bring (newest first): the total budget shared by the query's terms. */
export function perTermCap(terms: number, budget: number): number {
  return Math.min(budget, Math.max(250, Math.floor((budget * 2) / Math.max(1, terms))));
}

/**
 * Each term's BM25 weight in each of its matches, the SQL backends' way: a term's rarity from its match count
 * among `documents`, a message's length from `lengthOf` (its token estimate; undefined drops the match: a row
 * outside the scope), term frequency counted once (an index read for its doclists only tells presence).
 */
export function weighMatches(
  matches: readonly (readonly number[])[],
  lengthOf: (seq: number) => number | undefined,
  documents: number,
): Map<number, number>[] {
  let total = 0;
  let count = 0;
  const seen = new Set<number>();
  for (const seqs of matches) {
    for (const seq of seqs) {
      if (seen.has(seq)) continue;
      seen.add(seq);
      const length = lengthOf(seq);
      if (length === undefined) continue;
      total += length;
      count++;
    }
  }
  const average = count === 0 ? 1 : total / count;
  return matches.map((seqs) => {
    const rarity = idf(Math.max(documents, seqs.length), seqs.length);
    const weights = new Map<number, number>();
    for (const seq of seqs) {
      const length = lengthOf(seq);
      if (length !== undefined) weights.set(seq, bm25Weight(rarity, 1, length, average));
    }
    return weights;
  });
}

/**
 * The order of search-block entries for ranked recall: entries are no conversation, so no neighbours; those
 * matching more terms first, then BM25 relevance (`lengthOf` in any unit), then newest first.
 */
export function rankEntries(
  matches: readonly (readonly number[])[],
  lengthOf: (seq: number) => number | undefined,
  documents: number,
): number[] {
  return rankCandidates(weighMatches(matches, lengthOf, documents), () => null).map(({ seq }) => seq);
}
