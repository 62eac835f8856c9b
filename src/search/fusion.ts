/**
 * Hybrid recall: the text ranking and the vector channel's nearest messages fused by reciprocal rank (Cormack et
 * al., 2009): each list gives a message 1 / (k + rank), summed. Rank fusion needs no calibration between a BM25
 * weight and a cosine distance, and a message found by one channel alone still makes the list.
 */
import type { SearchPlan } from "./options.js";
import type { VectorChannel } from "./vectors/types.js";

/** The damping constant of reciprocal-rank fusion, as in the paper and most engines. */
export const RRF_K = 60;

/** How many nearest messages the vector channel brings to a search: a few pages of hits at least. */
export function vectorCandidates(limit: number): number {
  return Math.min(1000, Math.max(50, limit * 3));
}

/** The fused order of two rankings of seqs (best first) and each seq's fused score. */
export function fuseRankings(
  text: readonly number[],
  vector: readonly number[],
): { seqs: number[]; scores: Map<number, number> } {
  const scores = new Map<number, number>();
  const add = (list: readonly number[]) => {
    for (const [rank, seq] of list.entries())
      scores.set(seq, (scores.get(seq) ?? 0) + 1 / (RRF_K + rank + 1));
  };
  add(text);
  add(vector);
  // Ties (one list each, same rank) keep the text ranking's order: the text channel is the one we can explain.
  const textRank = new Map(text.map((seq, rank) => [seq, rank]));
  const seqs = [...scores.keys()].sort(
    (a, b) =>
      scores.get(b)! - scores.get(a)! ||
      (textRank.get(a) ?? Number.MAX_SAFE_INTEGER) - (textRank.get(b) ?? Number.MAX_SAFE_INTEGER) ||
      b - a,
  );
  return { seqs, scores };
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
  if (channel === undefined || !plan.vectors || plan.match !== "any" || plan.limit === 0) return undefined;
  const limit = vectorCandidates(plan.limit);
  return channel.nearest(
    query,
    plan.sessionId === undefined ? { limit } : { sessionId: plan.sessionId, limit },
  );
}
