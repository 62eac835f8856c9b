/**
 * Ranked recall, the default search of every backend: the query's content words (stop words dropped, quoted
 * phrases kept whole) each find their candidates, and the candidates are ranked here, the same way on every
 * backend. A backend supplies, per content term, the messages it matches with a relevance weight (BM25-like: rarer
 * terms weigh more, long messages do not win by length), and each candidate's parent; this module does the rest.
 *
 * Ranking, best first:
 * 1. how many of the query's terms the message's exchange matches together: the message, the turns next to it (its
 *    parent and its replies) and, through such a turn that matches the query too, the turns next to that one — a
 *    conversation's answer is often the turn after the question that names the subject, or the one after that;
 * 2. how many of them the message matches by itself (so a message matching every term comes first);
 *    a time the query names (date-terms.ts) counts in both as one term more, beside a word only;
 * 3. relevance: the message's own weight plus half the best weight among the turns next to it;
 * 4. newest first.
 */
import { firstInOrder } from "./first-in-order.js";
import { assertQueryTerms, DEFAULT_QUERY_LIMITS, type QueryLimits } from "./limits.js";
import { parseTerms, type QueryTerm, termsCost } from "./query.js";
import { functionWords } from "./stopwords.js";

/** Weight of the best neighbouring turn's relevance in a message's own (a reply carries half its question's). */
export const NEIGHBOUR_WEIGHT = 0.5;

/**
 * How many messages without searchable text in a row (an agent's tool calls and results, an emoji) a turn's link to
 * the turn before it passes through. Such messages are no turn of the conversation: an agent's answer comes after
 * its tool steps, and is still the reply to the question. A longer run (a long unattended tool loop) cuts the link,
 * which bounds what a search walks.
 */
export const TEXTLESS_RUN = 64;

/**
 * The content terms of `query` for ranked recall: its parsed terms without the function words of its language (a
 * quoted phrase is always kept; see stopwords.ts). Bounded like every query, except that only these terms count
 * against the word limit: a function word costs no index work, and a model's question in full sentences ("What did
 * Caroline say when …") should not be refused for its grammar. An empty list means nothing to search for.
 */
export function recallTerms(query: string, limits: QueryLimits = DEFAULT_QUERY_LIMITS): QueryTerm[] {
  const terms = parseTerms(query, limits);
  const words: string[] = [];
  for (const term of terms) if (term.kind === "word") words.push(term.word);
  let content = terms;
  if (words.length > 0) {
    const stop = functionWords(words);
    let word = 0;
    content = terms.filter((term) => term.kind === "phrase" || !stop[word++]);
  }
  assertQueryTerms(termsCost(content), limits, "content words");
  return content;
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
  /** Query terms this message's exchange matches together: the first tier (see the module comment). */
  window: number;
}

/**
 * Which candidates take part: `visible` ones at all (a branch outside the search is not), `returnable` ones as hits;
 * and how many of the best are wanted.
 */
export interface CandidateFilter {
  /** False for a message outside the search's branch scope: it is neither returned nor a neighbour. */
  visible?: (seq: number) => boolean;
  /** False for a message the filters (role, time) leave out: it still lends its weight to its neighbours. */
  returnable?: (seq: number) => boolean;
  /** Only the first `top` of the ranking (a page no filter can thin, not fused); default: all of it. */
  top?: number;
  /**
   * How many leading terms are the query's time (date-terms.ts): together they count as one term in the tiers, and
   * only beside a word (tierCount); their weight adds to the relevance as a word's does.
   */
  lifts?: number;
}

/**
 * Ranks candidates (see the module comment). `parentOf` gives a candidate's parent seq (null for a root).
 * Cost: O(candidates × terms).
 */
export function rankCandidates(
  perTerm: readonly TermMatches[],
  parentOf: (seq: number) => number | null | undefined,
  { visible, returnable, top, lifts = 0 }: CandidateFilter = {},
): RankedCandidate[] {
  let size = 0;
  for (const matches of perTerm) size += matches.size;
  const index = new Map<number, number>();
  const candidates = denseCandidates(size, lifts);
  perTerm.forEach((matches, term) => {
    for (const [seq, w] of matches) {
      if (visible !== undefined && !visible(seq)) continue;
      let i = index.get(seq);
      if (i === undefined) {
        i = candidates.n++;
        index.set(seq, i);
        candidates.seqs[i] = seq;
      }
      addTermWeight(candidates, i, term, w);
    }
  });
  for (let i = 0; i < candidates.n; i++) {
    const parent = parentOf(candidates.seqs[i]!);
    candidates.parent[i] = parent === null || parent === undefined ? -1 : (index.get(parent) ?? -1);
  }
  return rankDense(candidates, returnable, top);
}

/**
 * Candidates by dense index in typed arrays (a search ranks hundreds to thousands of them on every call: maps
 * keyed by seq were a fifth of a LoCoMo question's time). Terms are bits of a mask (a query has at most a few
 * dozen distinct terms; past 31, later ones share the top bit, which only makes such counts coarser).
 */
export interface DenseCandidates {
  /** How many of the slots are candidates. */
  n: number;
  seqs: Float64Array;
  /** The sum of the candidate's term weights. */
  weight: Float64Array;
  /** A bit per query term the candidate matches. */
  mask: Int32Array;
  /** The dense index of the candidate's parent when that is a candidate too, else -1. */
  parent: Int32Array;
  /** The last term added to each candidate (+1), so a term counts once per candidate. */
  lastTerm: Int32Array;
  /** Filled by rankDense: each candidate's relevance. */
  score: Float64Array;
  /** How many leading terms are the query's time (see CandidateFilter.lifts). */
  lifts: number;
}

/** Room for `size` candidates, none yet; the first `lifts` terms are the query's time. */
export function denseCandidates(size: number, lifts = 0): DenseCandidates {
  return {
    n: 0,
    lifts,
    seqs: new Float64Array(size),
    weight: new Float64Array(size),
    mask: new Int32Array(size),
    parent: new Int32Array(size),
    lastTerm: new Int32Array(size),
    score: new Float64Array(size),
  };
}

/** Adds term `term`'s weight `w` to candidate `i`, once per term. */
export function addTermWeight(candidates: DenseCandidates, i: number, term: number, w: number): void {
  if (candidates.lastTerm[i] === term + 1) return;
  candidates.lastTerm[i] = term + 1;
  const { lifts } = candidates;
  candidates.weight[i]! += w;
  // A query's time terms take the top bits (31 down), its words the bits from 0 (past the time bits, later words
  // share the highest word bit, which only makes such counts coarser).
  const bit = term < lifts ? 31 - term : Math.min(term - lifts, lifts === 0 ? 30 : 31 - lifts);
  candidates.mask[i]! |= 1 << bit;
}

/**
 * Ranks dense candidates (see the module comment); `returnable` false leaves a candidate out of the result while it
 * still lends its weight to its neighbours; `top` keeps only the first so many. Fills `score`.
 */
export function rankDense(
  candidates: DenseCandidates,
  returnable?: (seq: number) => boolean,
  top = Number.POSITIVE_INFINITY,
): RankedCandidate[] {
  const { n, seqs, weight, mask, parent } = candidates;
  // Each candidate's best neighbour weight and the union of its neighbours' terms, from parent-child pairs.
  const nearWeight = new Float64Array(n);
  const nearMask = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const j = parent[i]!;
    if (j < 0) continue;
    if (weight[j]! > nearWeight[i]!) nearWeight[i] = weight[j]!;
    nearMask[i]! |= mask[j]!;
    if (weight[i]! > nearWeight[j]!) nearWeight[j] = weight[i]!;
    nearMask[j]! |= mask[i]!;
  }
  // The exchange's terms: one more step through each neighbour that is a candidate itself, so a question, its answer
  // and the reply to that answer pool their terms, while a turn that matches nothing does not join two matches. On
  // LoCoMo's dev set this took R@5 from 68.0 to 69.6 % and R@10 from 76.7 to 77.9 %, better or the same in each of
  // its five conversations; one step more (three) was worse than two, and two steps through any turn (a grandparent
  // read even where the parent matches nothing; measured on memory) gained 0.2 points of R@10 and none of R@5.
  const exchange = new Int32Array(n);
  for (let i = 0; i < n; i++) exchange[i] = mask[i]! | nearMask[i]!;
  for (let i = 0; i < n; i++) {
    const j = parent[i]!;
    if (j < 0) continue;
    exchange[i]! |= nearMask[j]!;
    exchange[j]! |= nearMask[i]!;
  }
  const order: number[] = [];
  const score = candidates.score;
  // The two tiers in one number: both counts are at most 32.
  const tier = new Int32Array(n);
  // The bits of the query's words (below its time bits: addTermWeight).
  const words = candidates.lifts === 0 ? -1 : (2 ** (32 - candidates.lifts) - 1) | 0;
  for (let i = 0; i < n; i++) {
    score[i] = weight[i]! + NEIGHBOUR_WEIGHT * nearWeight[i]!;
    if (returnable !== undefined && !returnable(seqs[i]!)) continue;
    // A turn that matches the query's time alone is no hit: the time lifts word matches, it finds nothing itself.
    if (candidates.lifts > 0 && (mask[i]! & words) === 0) continue;
    tier[i] = (tierCount(exchange[i]!, words) << 8) | tierCount(mask[i]!, words);
    order.push(i);
  }
  const before = (a: number, b: number) =>
    tier[b]! - tier[a]! || score[b]! - score[a]! || seqs[b]! - seqs[a]!;
  // A page of 20 out of hundreds of candidates: sorting them all was ~60 % of the ranking of a LoCoMo question.
  const best = top < order.length ? firstInOrder(order, before, top) : order.sort(before);
  return best.map((i) => ({
    seq: seqs[i]!,
    score: score[i]!,
    matched: tier[i]! & 0xff,
    window: tier[i]! >> 8,
  }));
}

// A tier's count of terms: the words matched, and the query's time as one term more (however many of its terms
// match: a day is asked as its day and its week) beside a word only. Without time terms (`words` all bits), the
// count.
function tierCount(bits: number, words: number): number {
  const matched = bits & words;
  if (matched === bits) return popcount(bits);
  return matched === 0 ? 0 : popcount(matched) + 1;
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

/**
 * A term's rarity as the SQL backends weigh it: BM25's idf from its match count among `documents` (a capped read
 * never counts more matches than documents).
 */
export function termRarity(documents: number, matching: number): number {
  return idf(Math.max(documents, matching), matching);
}

/** How many candidates one term may bring (newest first): the total budget shared by the query's terms. */
export function perTermCap(terms: number, budget: number): number {
  return Math.min(budget, Math.max(250, Math.floor((budget * 2) / Math.max(1, terms))));
}

/**
 * Each term's BM25 weight in each of its matches, the SQL backends' way (Postgres, search blocks; SQLite weighs the
 * same in slots, sqlite/search/weights.ts): a term's rarity from its match count in scope (`termRarity`), a
 * message's length from `lengthOf` (its token estimate; undefined drops the match: a row outside the scope), term frequency
 * counted once (an index read for its doclists only tells presence).
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
    const lengths = seqs.map(lengthOf);
    // Only matches in scope count: one outside it (another branch, another session) changes no weight.
    const rarity = termRarity(documents, lengths.filter((length) => length !== undefined).length);
    const weights = new Map<number, number>();
    seqs.forEach((seq, i) => {
      const length = lengths[i];
      if (length !== undefined) weights.set(seq, bm25Weight(rarity, 1, length, average));
    });
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
