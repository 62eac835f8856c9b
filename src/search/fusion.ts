/**
 * Hybrid recall: the text ranking and the vector channel's nearest messages fused by reciprocal rank (Cormack et
 * al., 2009) where the text ranking itself is graded, inside its term-count tiers. The text order is lexicographic
 * (search/rank.ts): how many query terms a message's exchange (its neighbouring turns, and theirs where they match)
 * matches, how many it matches by itself, then BM25 relevance. Those counts are evidence no embedding outweighs (a
 * message holding every word of the question), so they stay; within one tier, where the text channel only has its
 * BM25 order, each list gives a message 1 / (k + rank), summed: the rank within the tier in the text list, the rank
 * in the vector list. A message only the vectors find has matched no term: it ranks with the messages that match
 * one term by themselves.
 * Rank fusion needs no calibration between a BM25 weight and a cosine distance. Plain RRF over the whole text list
 * let a weak embedder push messages that match every word below ones that match none: on LoCoMo with word
 * vectors it cost 10 points of R@5 (docs/RECALL.md, "Hybrid recall").
 */
import type { SearchPlan } from "./options.js";
import type { RankedCandidate } from "./rank.js";
import type { VectorChannel } from "./vectors/types.js";

/** The damping constant of reciprocal-rank fusion, as in the paper and most engines. */
export const RRF_K = 60;

/** How many nearest messages the vector channel brings to a search: a few pages of hits at least. */
export function vectorCandidates(limit: number): number {
  return Math.min(1000, Math.max(50, limit * 3));
}

/** A text-ranked candidate as fusion reads it: its seq and its term-count tiers (see rankCandidates). */
export type TextRanked = Pick<RankedCandidate, "seq" | "window" | "matched">;

/** The tier of a message only the vector channel found: that of a message matching one term by itself. */
const VECTOR_ONLY_TIER = { window: 1, matched: 1 };

/**
 * The fused order of the text ranking (best first, with tiers) and the vector channel's seqs (best first), and
 * each seq's fused score (its reciprocal-rank sum within its tier).
 */
export function fuseRankings(
  text: readonly TextRanked[],
  vector: readonly number[],
): { seqs: number[]; scores: Map<number, number> } {
  const tiers = new Map<number, { window: number; matched: number }>();
  const scores = new Map<number, number>();
  const textRank = new Map<number, number>();
  // Rank within the tier: the text list is sorted by tier first, so a tier is a run of it.
  let runStart = 0;
  for (const [rank, candidate] of text.entries()) {
    const before = text[rank - 1];
    if (before !== undefined && (before.window !== candidate.window || before.matched !== candidate.matched))
      runStart = rank;
    tiers.set(candidate.seq, candidate);
    textRank.set(candidate.seq, rank);
    scores.set(candidate.seq, 1 / (RRF_K + rank - runStart + 1));
  }
  for (const [rank, seq] of vector.entries()) {
    if (!tiers.has(seq)) tiers.set(seq, VECTOR_ONLY_TIER);
    scores.set(seq, (scores.get(seq) ?? 0) + 1 / (RRF_K + rank + 1));
  }
  const seqs = [...scores.keys()].sort((a, b) => {
    const ta = tiers.get(a)!;
    const tb = tiers.get(b)!;
    return (
      tb.window - ta.window ||
      tb.matched - ta.matched ||
      scores.get(b)! - scores.get(a)! ||
      // Ties (one list each, same rank) keep the text ranking's order: the text channel is the one we can explain.
      (textRank.get(a) ?? Number.MAX_SAFE_INTEGER) - (textRank.get(b) ?? Number.MAX_SAFE_INTEGER) ||
      b - a
    );
  });
  return { seqs, scores };
}

/** True when a search fuses the vector channel: a ranked search with hits to give, on a store with an embedder. */
export function takesVectors(channel: VectorChannel | undefined, plan: SearchPlan): channel is VectorChannel {
  return channel !== undefined && plan.vectors && plan.match === "any" && plan.limit > 0;
}

/**
 * The vector channel's nearest seqs for a ranked search, or undefined when the search takes no vectors (no
 * embedder, `vectors: false`, an all-words search). An embedder failure is the channel's to report: it answers [].
 */
export async function nearestFor(
  channel: VectorChannel | undefined,
  query: string,
  plan: SearchPlan,
): Promise<number[] | undefined> {
  if (!takesVectors(channel, plan)) return undefined;
  const limit = vectorCandidates(plan.limit);
  // The sessions, the role, the time range and the sessions' active paths go into the channel's own read:
  // filtering its nearest messages afterwards found nothing for a set of sessions whose messages others' outnumber,
  // a role or time range the nearest messages all miss, or a path a long abandoned branch outnumbers. Sessions past
  // the channel's bounds (NearestOptions.branch) are picked afterwards by the page.
  return channel.nearest(query, {
    limit,
    ...(plan.sessionId === undefined ? {} : { sessionId: plan.sessionId }),
    ...(plan.sessionIds === undefined ? {} : { sessionIds: [...plan.sessionIds] }),
    // However many sessions the owner has: the channel keeps to them by the registry's owner column.
    ...(plan.owner === undefined ? {} : { owner: plan.owner }),
    ...(plan.roles === undefined ? {} : { role: [...plan.roles] }),
    ...(plan.since === undefined ? {} : { since: plan.since }),
    ...(plan.until === undefined ? {} : { until: plan.until }),
    ...(plan.activeOnly ? { branch: "active" as const } : {}),
  });
}
