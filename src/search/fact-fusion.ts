/**
 * The fact channel's fusion with the turn ranking (docs/FACTS.md#recall, the reading in search/facts.ts): the facts'
 * sources in scope as seqs, the fused order (a turn scores 1 / (k + its rank) plus FACT_WEIGHT / (k + rank) of the
 * best-ranked fact naming it, halved for a fact matching fewer terms than the best fact; a strong fact lifts a turn
 * that matches a word more, inside the word counts), and the facts merged into a page as hits of their own.
 */
import type { FactHit, FactSource } from "../contract/facts.js";
import type { FactSearchHit } from "../contract/search.js";
import { FACT_RRF_K, factTierFactor } from "./fact-weights.js";

/** The fact list's weight against the turn list's 1: a fact is evidence about a turn, not the turn itself. */
export const FACT_WEIGHT = 0.5;

/**
 * The weight of a strong fact (one matching at least as many of the query's terms as the best turn does by itself)
 * for a turn that matches a word of the query too: as much evidence as a turn. It never takes the turn above one
 * that matches more terms by itself, and a turn only a fact names keeps FACT_WEIGHT (fuseFacts).
 */
export const STRONG_FACT_WEIGHT = 1;

/** The facts a search asked of the fact channel, best first, and those with a source in its scope (filled by it). */
export interface FactLifts {
  hits: readonly FactHit[];
  /** Each fact's sources in the search's scope, as seqs (by position in `hits`); empty: the fact takes no part. */
  seqs: number[][];
  /**
   * The most query terms a turn of the text ranking matches by itself (filled by the page); undefined: unknown, and
   * no fact is strong.
   */
  turnMatched?: number | undefined;
}

/** A fact source as a map key (a backend's `seqsOf` answers by it). */
export function factSourceKey({ sessionId, messageId }: FactSource): string {
  return JSON.stringify([sessionId, messageId]);
}

/** The facts' sources in scope as seqs, by `seqOf` (undefined: outside the search's scope). */
export function liftsOf(
  hits: readonly FactHit[],
  seqOf: (source: FactSource) => number | undefined,
): FactLifts {
  const seqs = hits.map(({ fact }) => {
    const inScope: number[] = [];
    for (const source of fact.sources) {
      const seq = seqOf(source);
      if (seq !== undefined && !inScope.includes(seq)) inScope.push(seq);
    }
    return inScope;
  });
  return { hits, seqs };
}

/** The share a fact at 0-based position `i` of the facts in scope gives its sources (and itself as a hit). */
export function factShare(i: number, weight = FACT_WEIGHT): number {
  return weight / (FACT_RRF_K + i + 1);
}

/**
 * The most query terms a fact that takes part (one with a source in scope) matches; undefined when no such fact's
 * count is known (every fact then keeps its whole weight).
 */
export function bestFactMatched(lifts: FactLifts): number | undefined {
  let best: number | undefined;
  for (const [k, seqs] of lifts.seqs.entries()) {
    const matched = lifts.hits[k]?.matched;
    if (seqs.length > 0 && matched !== undefined && (best === undefined || matched > best)) best = matched;
  }
  return best;
}

/**
 * Whether a fact is strong: it matches at least as many of the query's terms as the best turn does by itself
 * (`turnMatched`). A count unknown on either side (a fact only the vectors found, a store that does not count) is
 * not: such a fact never outweighs the words the turns match.
 */
export function isStrongFact(matched: number | undefined, turnMatched: number | undefined): boolean {
  return matched !== undefined && turnMatched !== undefined && turnMatched > 0 && matched >= turnMatched;
}

/**
 * The turn order (best first) fused with the facts' lifts: each seq's score is 1 / (k + rank) in `order`, plus the
 * share of the best fact in scope that names it (halved for a fact matching fewer terms than the best fact,
 * factTierFactor). A turn that matches a word of the query by itself
 * (`matchedAt(rank)`, the terms the turn at that place matches; > 0) takes a strong fact's share (STRONG_FACT_WEIGHT)
 * where that scores more, but never more than any turn before it in `order` that matches more terms: it may pass
 * turns that match as much or less, not those. A turn only a fact names takes the FACT_WEIGHT share alone, so it
 * comes after the turns that match no later than before. Without `matchedAt` no fact is strong. Ties keep the turn
 * order.
 */
export function fuseFacts(
  order: readonly number[],
  lifts: FactLifts,
  matchedAt?: (rank: number) => number,
): { seqs: number[]; scores: FusedScores } {
  const lift = new Map<number, number>();
  const strong = new Map<number, number>();
  const best = bestFactMatched(lifts);
  let i = 0;
  for (const [k, seqs] of lifts.seqs.entries()) {
    if (seqs.length === 0) continue;
    const place = i++;
    const matched = lifts.hits[k]?.matched;
    const factor = factTierFactor(matched, best);
    const share = factShare(place, FACT_WEIGHT * factor);
    const strongShare =
      matchedAt !== undefined && isStrongFact(matched, lifts.turnMatched)
        ? factShare(place, STRONG_FACT_WEIGHT * factor)
        : undefined;
    // A turn takes its best fact's share, not the sum: ten facts of one long turn do not make it the answer.
    for (const seq of seqs) {
      if (!lift.has(seq)) lift.set(seq, share);
      if (strongShare !== undefined && !strong.has(seq)) strong.set(seq, strongShare);
    }
  }
  const { lifted, liftedAt } = liftedTurns(order, lift, strong, matchedAt);
  // The turns no fact names keep the turn order and their scores fall with it: only the lifted ones are sorted, then
  // the two runs merge (sorting the whole order, a thousand turns, was most of the fusion's time). No object or map
  // entry per turn: the order is the whole text ranking, and those were most of what was left (~75 µs of a LoCoMo
  // question's ~1,200 turns).
  for (const [seq, share] of lift) lifted.push({ seq, score: share, place: Number.MAX_SAFE_INTEGER });
  lifted.sort(fusedOrder);
  const size = order.length + lift.size;
  const seqs: number[] = new Array(size);
  const scores = new Float64Array(size);
  let at = 0;
  let next = 0;
  const take = (seq: number, score: number) => {
    seqs[at] = seq;
    scores[at++] = score;
  };
  for (let rank = 0; rank < order.length; rank++) {
    if (liftedAt[rank] === 1) continue;
    const seq = order[rank]!;
    const score = turnShare(rank);
    // The lifted seq comes first while it orders before this turn (compared by fields: no object per turn).
    for (let f = lifted[next]; f !== undefined; f = lifted[next]) {
      if (compareFused(f.score, f.place, f.seq, score, rank, seq) >= 0) break;
      take(f.seq, f.score);
      next++;
    }
    take(seq, score);
  }
  for (; next < lifted.length; next++) take(lifted[next]!.seq, lifted[next]!.score);
  return { seqs, scores: scoresInOrder(seqs, scores) };
}

/**
 * The turns of `order` that facts lift, with their fused scores (`lift` keeps the seqs no turn holds: those only a
 * fact names), and which places of `order` they took. A strong share counts up to the lowest score so far of the
 * turns that match more terms (each such turn comes before it in `order`, its score known): a tie keeps the turn
 * order, so the lifted turn stays after them.
 */
function liftedTurns(
  order: readonly number[],
  lift: Map<number, number>,
  strong: ReadonlyMap<number, number>,
  matchedAt: ((rank: number) => number) | undefined,
): { lifted: Fused[]; liftedAt: Uint8Array } {
  const lifted: Fused[] = [];
  const liftedAt = new Uint8Array(order.length);
  // The lowest fused score so far among the turns matching each count of terms (only while a strong share is left).
  const lowest = new Map<number, number>();
  let strongLeft = strong.size;
  for (let rank = 0; rank < order.length && lift.size > 0; rank++) {
    const seq = order[rank]!;
    const share = lift.get(seq);
    const matched = strongLeft > 0 && matchedAt !== undefined ? matchedAt(rank) : 0;
    if (share === undefined) {
      if (strongLeft > 0) lowest.set(matched, turnShare(rank));
      continue;
    }
    lift.delete(seq);
    liftedAt[rank] = 1;
    let score = turnShare(rank) + share;
    const strongShare = strong.get(seq);
    if (strongShare !== undefined) {
      strongLeft--;
      if (matched > 0) {
        let cap = Number.POSITIVE_INFINITY;
        for (const [more, low] of lowest) if (more > matched && low < cap) cap = low;
        score = Math.max(score, Math.min(turnShare(rank) + strongShare, cap));
      }
    }
    if (strongLeft > 0) lowest.set(matched, Math.min(lowest.get(matched) ?? Number.POSITIVE_INFINITY, score));
    lifted.push({ seq, score, place: rank });
  }
  return { lifted, liftedAt };
}

/**
 * The scores of a fused order as a lookup, indexed as far as asked: a page asks for its hits' scores, the first few
 * of the order, so most seqs are never put in a map.
 */
function scoresInOrder(seqs: readonly number[], scores: Float64Array): FusedScores {
  const known = new Map<number, number>();
  let read = 0;
  return {
    get(seq) {
      const score = known.get(seq);
      if (score !== undefined) return score;
      while (read < seqs.length) {
        const next = seqs[read]!;
        known.set(next, scores[read]!);
        if (next === seq) return scores[read++];
        read++;
      }
      return undefined;
    },
  };
}

/** Each fused seq's score (pipeline.ts's ScoreLookup; that module imports this one). */
export interface FusedScores {
  get(seq: number): number | undefined;
}

/** A seq in the fused order: its fused score and its place in the turn order (a fact's alone: after every turn). */
interface Fused {
  seq: number;
  score: number;
  place: number;
}

/** A turn's share for its 0-based place in the turn order. */
function turnShare(rank: number): number {
  return 1 / (FACT_RRF_K + rank + 1);
}

/** The fused order: by score, ties in the turn order (then newest first). */
function fusedOrder(a: Fused, b: Fused): number {
  return compareFused(a.score, a.place, a.seq, b.score, b.place, b.seq);
}

/** The fused order by fields: the higher score first, then the earlier place, then the newer seq. */
function compareFused(
  scoreA: number,
  placeA: number,
  seqA: number,
  scoreB: number,
  placeB: number,
  seqB: number,
): number {
  return scoreB - scoreA || placeA - placeB || seqB - seqA;
}

/** A fact as a search hit (its sources as stored: every one is its owner's or its session's). */
export function factHit({ fact }: FactHit, score: number): Omit<FactSearchHit, "rank"> {
  return {
    kind: "fact",
    id: fact.id,
    text: fact.text,
    about: fact.about,
    observedAt: fact.observedAt,
    producer: fact.producer,
    sources: fact.sources.map(({ sessionId, messageId }) => ({ sessionId, messageId })),
    owner: fact.owner,
    sessionId: fact.sessionId,
    score,
  };
}

/**
 * A page of turn hits (with their fused scores) and the facts in scope merged by score, at most `limit`, ranked
 * 1, 2, 3, … in that order: what a search that asked for `facts: "hits"` returns.
 */
export function withFactHits<H extends { score: number; rank: number }>(
  page: readonly H[],
  lifts: FactLifts,
  limit: number,
): (H | FactSearchHit)[] {
  const facts: Omit<FactSearchHit, "rank">[] = [];
  for (const [i, hit] of lifts.hits.entries()) {
    if (lifts.seqs[i]!.length > 0) facts.push(factHit(hit, factShare(facts.length)));
  }
  const merged: (H | Omit<FactSearchHit, "rank">)[] = [];
  let f = 0;
  for (const hit of page) {
    while (f < facts.length && facts[f]!.score > hit.score) merged.push(facts[f++]!);
    merged.push(hit);
  }
  while (f < facts.length) merged.push(facts[f++]!);
  return merged.slice(0, limit).map((hit, i) => Object.assign(hit, { rank: i + 1 }) as H | FactSearchHit);
}
