/**
 * The recall bench's figures for one search over a set of questions (../shared/datasets/README.md): R@k (an evidence
 * turn among the first k results), recall-all@k (every evidence turn of the question among the first k: what a
 * multi-hop answer needs), MRR (the mean of 1 / the rank of the first result holding an evidence turn, 0 past the
 * results asked for) and the share of questions with no result. A result is a list of turn ids: a turn its own, a
 * fact its source turns at its rank.
 */

/** The cut-offs of the R@k columns. */
export const RECALL_K = [1, 5, 10, 20] as const;
/** The cut-off of the recall-all column: the page a model is usually given. */
export const RECALL_ALL_K = 10;

/** The running figures of one search. */
export interface RecallTally {
  questions: number;
  empty: number;
  /** Questions with an evidence turn among the first k, by k. */
  hits: Map<number, number>;
  /** Questions with every evidence turn among the first RECALL_ALL_K. */
  all: number;
  /** The sum of 1 / first evidence rank (0 when none of the results holds one). */
  reciprocal: number;
}

/** A tally of no question yet. */
export function newTally(): RecallTally {
  return { questions: 0, empty: 0, hits: new Map(RECALL_K.map((k) => [k, 0])), all: 0, reciprocal: 0 };
}

/** The 1-based rank of the first result holding one of `evidence`, or undefined when none does. */
export function firstEvidenceRank(
  results: readonly (readonly string[])[],
  evidence: readonly string[],
): number | undefined {
  const at = results.findIndex((turns) => evidence.some((e) => turns.includes(e)));
  return at < 0 ? undefined : at + 1;
}

/** Whether every evidence turn is among the first `k` results. */
export function allEvidenceWithin(
  results: readonly (readonly string[])[],
  evidence: readonly string[],
  k: number,
): boolean {
  const found = new Set(results.slice(0, k).flat());
  return evidence.every((e) => found.has(e));
}

/** Counts one question's results into `tally`. */
export function countQuestion(
  tally: RecallTally,
  results: readonly (readonly string[])[],
  evidence: readonly string[],
): void {
  tally.questions++;
  if (results.length === 0) tally.empty++;
  const first = firstEvidenceRank(results, evidence);
  if (first !== undefined) {
    tally.reciprocal += 1 / first;
    for (const k of RECALL_K) if (first <= k) tally.hits.set(k, tally.hits.get(k)! + 1);
  }
  if (allEvidenceWithin(results, evidence, RECALL_ALL_K)) tally.all++;
}

/** The table's figure cells: no result, R@k…, recall-all, MRR. */
export function tallyCells(tally: RecallTally): string[] {
  const n = Math.max(1, tally.questions);
  const pct = (count: number) => `${((100 * count) / n).toFixed(1)} %`;
  return [
    pct(tally.empty),
    ...RECALL_K.map((k) => pct(tally.hits.get(k)!)),
    pct(tally.all),
    (tally.reciprocal / n).toFixed(3),
  ];
}

/** The header of tallyCells' columns. */
export const TALLY_HEADER = ["no result", ...RECALL_K.map((k) => `R@${k}`), `all@${RECALL_ALL_K}`, "MRR"];
