/**
 * Facts in the vector channel, the fact channel's part (docs/FACTS.md#recall): the facts nearest to a search's query
 * vector, per scope, and their fusion with the facts' word ranking.
 */
import type { FactCapableStore, FactHit, FactQuery, FactScope } from "../contract/facts.js";
import type { SessionStore } from "../contract/store.js";
import { FACT_CANDIDATES, FACT_RRF_K } from "./fact-weights.js";
import type { SearchPlan } from "./options.js";
import type { VectorChannel } from "./vectors/types.js";

/** A fact read's source filter (as the word search's, facts.ts SourceFilter). */
type SourceFilter = Pick<FactQuery, "sourcesIn" | "sourceSession">;

/**
 * How many of the facts nearest to the query (on a store with an embedder) join the fact ranking. A fact found by
 * meaning holds none of the question's words ("What martial arts has John done?", "John practices taekwondo"); past
 * the first few, the nearest facts are the ones about the same person (docs/FACTS.md#recall).
 */
export const FACT_VECTOR_CANDIDATES = 10;
/** The vector list's weight in the fact ranking, against the word list's 1 (docs/FACTS.md#recall). */
export const FACT_VECTOR_WEIGHT = 1;

/** A fact store that keeps fact vectors (StoreFacts): the scope's facts nearest to a query vector. */
interface NearbyFacts {
  nearby(scope: FactScope, query: Float32Array, options?: FactQuery): Promise<FactHit[]>;
}

/** The store's facts' vector read, when it has one. */
function nearbyOf(store: FactCapableStore): NearbyFacts | undefined {
  const facts = store.facts as Partial<NearbyFacts>;
  return typeof facts.nearby === "function" ? (facts as NearbyFacts) : undefined;
}

/**
 * The facts of `scopes` nearest to the query vector `near`, best first, at most FACT_VECTOR_CANDIDATES: merged by
 * similarity (one query vector, so comparable across scopes).
 */
export async function nearFactsFor(
  store: FactCapableStore,
  near: Float32Array,
  scopes: readonly FactScope[],
  sources: SourceFilter = {},
): Promise<FactHit[]> {
  const facts = nearbyOf(store);
  if (facts === undefined || scopes.length === 0) return [];
  const options = { limit: FACT_VECTOR_CANDIDATES, ...sources };
  const lists = await Promise.all(scopes.map((scope) => facts.nearby(scope, near, options)));
  const seen = new Set<string>();
  return lists
    .flat()
    .sort((a, b) => b.score - a.score)
    .filter(({ fact }) => !seen.has(fact.id) && seen.add(fact.id) !== undefined)
    .slice(0, FACT_VECTOR_CANDIDATES)
    .map((hit, i) => ({ ...hit, rank: i + 1 }));
}

/**
 * The word ranking of the facts (already cut to the relevant ones) fused with the vector ranking by reciprocal rank:
 * a fact scores 1 / (k + its word rank) plus FACT_VECTOR_WEIGHT / (k + its vector rank); one only the vectors find
 * joins at its vector share. Ties keep the word order; at most FACT_CANDIDATES, renumbered, each scored by its sum.
 */
export function fuseFactLists(words: readonly FactHit[], near: readonly FactHit[]): FactHit[] {
  if (near.length === 0) return [...words];
  const fused = new Map<string, { hit: FactHit; score: number; place: number }>();
  for (const [i, hit] of words.entries())
    fused.set(hit.fact.id, { hit, score: 1 / (FACT_RRF_K + i + 1), place: i });
  for (const [i, hit] of near.entries()) {
    const share = FACT_VECTOR_WEIGHT / (FACT_RRF_K + i + 1);
    const known = fused.get(hit.fact.id);
    if (known) known.score += share;
    else fused.set(hit.fact.id, { hit, score: share, place: words.length + i });
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.place - b.place)
    .slice(0, FACT_CANDIDATES)
    .map(({ hit, score }, i) => ({ ...hit, score, rank: i + 1 }));
}

/** The vector channel's query embedding, for a search that takes vectors on a store with an embedder. */
interface QueryVectors {
  queryVector(query: string): Promise<Float32Array | undefined>;
}

/** The store's vector channel as the fact channel embeds a query with it, when the search takes vectors. */
export function queryVectors(store: SessionStore, plan: SearchPlan): QueryVectors | undefined {
  const channel = (store as { vectors?: VectorChannel & Partial<QueryVectors> }).vectors;
  if (channel === undefined || !plan.vectors || typeof channel.queryVector !== "function") return undefined;
  return channel as QueryVectors;
}
