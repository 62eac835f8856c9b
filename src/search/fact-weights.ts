/** The fact channel's fusion constants (docs/FACTS.md#recall), shared by its word and vector parts. */

/**
 * The damping constant of the fact fusion, for both lists. Much smaller than the vector channel's 60: both lists are
 * short and sharp (a question's answer is among a few turns and a few facts), and with 60 a lifted turn outranked
 * every turn that matched the question's words (LoCoMo R@10 fell under text alone, docs/FACTS.md#recall).
 */
export const FACT_RRF_K = 5;

/**
 * How many facts a search reads, best first. A fact past the first few dozen lifts a turn by less than a place in
 * the turn order is worth; reading 100 (the fact store's bound) cost SQLite a third of a fused search and moved no
 * LoCoMo figure (docs/FACTS.md#recall).
 */
export const FACT_CANDIDATES = 30;

/**
 * The part of its weight (fact-fusion.ts's FACT_WEIGHT, or STRONG_FACT_WEIGHT) a fact keeps when it matches fewer of
 * the query's terms than the best fact in scope (the channel keeps those one term short, search/facts.ts). Such a
 * fact is weaker evidence: among the first five facts on LoCoMo dev it names an answer turn for 4.5 % of them, a fact
 * of the best count for 25 %; at its whole weight it moved turns the words rank well down the page.
 */
export const BELOW_BEST_FACT_FACTOR = 0.5;

/**
 * The part of its weight a fact keeps: all of it, or BELOW_BEST_FACT_FACTOR when it matches fewer terms than the
 * best fact (`best`, fact-fusion.ts's bestFactMatched). A count unknown (a fact only the vectors found) keeps all.
 */
export function factTierFactor(matched: number | undefined, best: number | undefined): number {
  return matched !== undefined && best !== undefined && matched < best ? BELOW_BEST_FACT_FACTOR : 1;
}
