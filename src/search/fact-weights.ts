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
