/**
 * The fact channel of ranked recall (docs/FACTS.md#recall): a store with facts (contract/facts.ts) answers a search's
 * question from its facts too, and a fact that ranks lifts the turns it came from (the fusion: fact-fusion.ts). The
 * facts are read by scope (never another owner's), and a fact counts only through its sources in the search's own
 * scope (its sessions, its owner's, its active paths): one whose sources all lie outside takes no part, neither as a
 * lift nor as a hit.
 */
import type { FactCapableStore, FactHit, FactQuery, FactScope } from "../contract/facts.js";
import { hasFactStore } from "../contract/facts.js";
import type { SessionStore } from "../contract/store.js";
import { canBeStored } from "../message/ids.js";
import type { FactLifts } from "./fact-fusion.js";
import { fuseFactLists, nearFactsFor, queryVectors } from "./fact-near.js";
import { subjectFirst } from "./fact-subject.js";
import { FACT_CANDIDATES } from "./fact-weights.js";
import type { SearchPlan } from "./options.js";

export { FACT_VECTOR_CANDIDATES, FACT_VECTOR_WEIGHT, fuseFactLists, nearFactsFor } from "./fact-near.js";
export { FACT_CANDIDATES, FACT_RRF_K } from "./fact-weights.js";

/**
 * The longest active path whose ids a search passes to the fact store (`sourcesIn`); past it only the session filter
 * applies and the page drops the facts off the path. Reading and passing a path's ids costs its depth: 5,000 ids add
 * ~16 ms to a search on SQLite and ~33 ms on Postgres (docs/FACTS.md#recall), so 10,000 bounds it.
 */
export const SOURCES_IN_BOUND = 10_000;
/** Most fact scopes (owners, or sessions without one) one search reads; a set of sessions past it reads the first. */
export const MAX_FACT_SCOPES = 16;

/** True when a search takes the fact channel: a ranked search with hits to give, on a store with facts. */
export function takesFacts(store: SessionStore, plan: SearchPlan): store is FactCapableStore {
  return plan.facts !== false && plan.match === "any" && plan.limit > 0 && hasFactStore(store);
}

/**
 * The fact scopes a search reads: a session's own, and its owner's; an owner search its owner's. A store-wide
 * search reads none (facts are read by scope; there is no store-wide fact index).
 */
export async function factScopes(
  plan: SearchPlan,
  ownerOf: (sessionId: string) => Promise<string | null | undefined>,
): Promise<FactScope[]> {
  const named =
    plan.sessionId !== undefined
      ? plan.sessionIds === undefined || plan.sessionIds.has(plan.sessionId)
        ? [plan.sessionId]
        : []
      : plan.sessionIds === undefined
        ? undefined
        : [...plan.sessionIds];
  const scopes = new Map<string, FactScope>();
  if (plan.owner !== undefined) scopes.set(`o:${plan.owner}`, { owner: plan.owner });
  for (const sessionId of named ?? []) {
    if (scopes.size >= MAX_FACT_SCOPES) break;
    // An id no row can hold (a lone surrogate, U+0000) finds nothing, as the text search answers: no fact read.
    if (!canBeStored(sessionId)) continue;
    const owner = await ownerOf(sessionId);
    // An owner search keeps to its owner: another owner's session named in the set brings nothing of its own.
    if (plan.owner !== undefined && owner !== plan.owner) continue;
    if (owner) scopes.set(`o:${owner}`, { owner });
    // A session's own facts (those learned before it had an owner, or of a session without one).
    if (scopes.size < MAX_FACT_SCOPES) scopes.set(`s:${sessionId}`, { sessionId });
  }
  return [...scopes.values()];
}

/** A fact read's source filter: the one session searched, and in an active-branch search its path's ids. */
export type SourceFilter = Pick<FactQuery, "sourcesIn" | "sourceSession">;

/**
 * An active-branch search's path, asked by the fact channel of a backend: the message ids on the session's active
 * path, or undefined when every message of the session is on it (it has no other branches), or when the path is
 * longer than `bound` (the backend reads none then: the session filter alone applies).
 */
export type PathIds = (
  sessionId: string,
  bound: number,
) => readonly string[] | undefined | Promise<readonly string[] | undefined>;

/** The best facts of `scopes` for `query`, merged by score (each scope's search is ranked on its own). */
export async function factsFor(
  store: FactCapableStore,
  query: string,
  scopes: readonly FactScope[],
  sources: SourceFilter = {},
): Promise<FactHit[]> {
  if (scopes.length === 0) return [];
  const options = { limit: FACT_CANDIDATES, ...sources };
  // A built-in store reads only the facts the cut below keeps (relevantFacts): half the rows on LoCoMo.
  const facts = store.facts as FactCapableStore["facts"] & Partial<RelevantSearch>;
  const lists = await Promise.all(
    scopes.map((scope) =>
      typeof facts.searchRelevant === "function"
        ? facts.searchRelevant(scope, query, options, RELEVANT_SLACK)
        : facts.search(scope, query, options),
    ),
  );
  if (lists.length === 1) return lists[0]!;
  const seen = new Set<string>();
  return (
    lists
      .flat()
      // By the terms matched first, as each scope's own order is: a score compares facts of one tier only.
      .sort((a, b) => matchedOf(b) - matchedOf(a) || b.score - a.score || a.rank - b.rank)
      .filter(({ fact }) => !seen.has(fact.id) && seen.add(fact.id) !== undefined)
      .slice(0, FACT_CANDIDATES)
      .map((hit, i) => ({ ...hit, rank: i + 1 }))
  );
}

/** The fact stores of this package (facts/store-base.ts): a search that reads only the facts recall keeps. */
interface RelevantSearch {
  searchRelevant(scope: FactScope, query: string, options: FactQuery, slack: number): Promise<FactHit[]>;
}

/** How many fewer of the query's terms than the best fact a fact that takes part may match (relevantFacts). */
const RELEVANT_SLACK = 1;

/** The query terms a fact matches, as its store says (a store that does not: every one). */
function matchedOf(hit: FactHit): number {
  return hit.matched ?? Number.MAX_SAFE_INTEGER;
}

/**
 * The facts that take part: those that match at least as many of the query's terms as the best fact, less one. A
 * fact that matches only the name the question is about (every fact about the person does) is no evidence for a
 * turn when other facts match what is asked; its lift only pushed down turns that match the question (on LoCoMo it
 * took R@5 from 74.2 to 75.1 %, docs/FACTS.md#recall). Ranks are renumbered.
 */
export function relevantFacts(hits: readonly FactHit[]): FactHit[] {
  let best = 0;
  for (const hit of hits) best = Math.max(best, matchedOf(hit));
  return hits
    .filter((hit) => matchedOf(hit) >= best - RELEVANT_SLACK)
    .map((hit, i) => ({ ...hit, rank: i + 1 }));
}

/**
 * The source filter of a search's fact reads: a search of one session reads only facts with a source in it, and an
 * active-branch one only those with a source on its active path (`pathIds`), so facts that the scope rule would drop
 * never take the candidates' places. Other searches read their scopes whole (the page's `seqOf` drops the rest).
 */
export async function sourceFilter(plan: SearchPlan, pathIds?: PathIds): Promise<SourceFilter> {
  const sessionId = plan.sessionId;
  if (sessionId === undefined) return {};
  const path = plan.activeOnly ? await pathIds?.(sessionId, SOURCES_IN_BOUND) : undefined;
  return path === undefined || path.length > SOURCES_IN_BOUND
    ? { sourceSession: sessionId }
    : { sourceSession: sessionId, sourcesIn: path };
}

/** Fact stores that held a fact in this process: asked no more (see {@link mayHoldFacts}). */
const heldFacts = new WeakSet<object>();
/** Fact stores found empty: when, and their own fact writes then (see {@link mayHoldFacts}). */
const foundEmpty = new WeakMap<object, { at: number; writes: number }>();

/**
 * How long a store found without facts is taken to still have none (ms): a fact another process (or another store
 * object on the same database) writes first takes part in this store's searches at most this late.
 */
export const FACTS_RECHECK_MS = 1000;

/**
 * Whether the fact channel should look. A store found holding a fact is remembered for the process: the read names
 * no scope, so on Citus it is a task per shard, and a store that held facts almost always still does (if not, the
 * routed searches find nothing, at their cost only). A store found empty is taken to be so, without a read, until
 * it writes a fact itself (`written`, its fact writes, changes) or {@link FACTS_RECHECK_MS} passed: so a search of a
 * store that has never held a fact reads no more statements than before facts existed, but for one read a second.
 */
async function mayHoldFacts(store: FactCapableStore): Promise<boolean> {
  const facts = store.facts;
  if (heldFacts.has(facts)) return true;
  const writes = (facts as { written?: number }).written;
  const empty = foundEmpty.get(facts);
  const now = Date.now();
  if (empty && writes !== undefined && empty.writes === writes && now - empty.at < FACTS_RECHECK_MS)
    return false;
  if (await facts.isEmpty()) {
    if (writes !== undefined) foundEmpty.set(facts, { at: now, writes });
    return false;
  }
  foundEmpty.delete(facts);
  heldFacts.add(facts);
  return true;
}

/**
 * The fact channel's answer for a search, or undefined when it takes none (no facts on the store, `facts: false`,
 * an all-words search, a store-wide one). `pathIds`: the backend's active path of one session (sourceFilter).
 */
export async function factChannel(
  store: SessionStore,
  query: string,
  plan: SearchPlan,
  ownerOf: (sessionId: string) => Promise<string | null | undefined>,
  pathIds?: PathIds,
): Promise<FactLifts | undefined> {
  if (!takesFacts(store, plan) || !(await mayHoldFacts(store))) return undefined;
  const scopes = await factScopes(plan, ownerOf);
  if (scopes.length === 0) return undefined;
  const sources = await sourceFilter(plan, pathIds);
  const vectors = queryVectors(store, plan);
  const [words, near] = await Promise.all([
    factsFor(store, query, scopes, sources),
    vectors === undefined
      ? []
      : vectors
          .queryVector(query)
          .then((v) => (v === undefined ? [] : nearFactsFor(store, v, scopes, sources))),
  ]);
  // The question's subject first (fact-subject.ts): a fact about someone else matched the name only in passing.
  const hits = subjectFirst(fuseFactLists(relevantFacts(words), near), query);
  return hits.length === 0 ? undefined : { hits, seqs: [] };
}
