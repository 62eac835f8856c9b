/**
 * Ranked recall, written once over a backend's `RecallSource`: terms → scope → candidates weighed and ranked →
 * fusion with the vector channel → page. The backend answers the steps that touch its storage (which rows are in
 * scope, each term's candidates with their parents and lengths, the page of hits and its extras); the order, the
 * cut to the page and the fusion are decided here, the same way for every backend. The steps come apart at the
 * vector channel (`rankText`, then `pageOf`), because a backend reads the ranking and the page in its own
 * transactions around the channel's awaited answer; `recall` runs them in a row.
 */
import { fuseRankings } from "./fusion.js";
import { outsideSessions, type SearchPlan } from "./options.js";
import type { QueryTerm } from "./query.js";
import type { RankedCandidate } from "./rank.js";

/** Each ranked seq's relevance in one search. */
export interface ScoreLookup {
  get(seq: number): number | undefined;
}

/** A text ranking, best first, and each candidate's relevance (kept for every candidate, not only the ranked). */
export interface TextRanking {
  ranked: RankedCandidate[];
  scores: ScoreLookup;
}

/** What a backend answers for ranked recall (the pipeline above decides the rest). */
export interface RecallSource<Scope, Page> {
  /** The search's scope (sessions, branch, the rows a term's rarity is counted among); undefined: nothing to find. */
  scope(plan: SearchPlan): Scope | undefined;
  /**
   * Each term's candidates within the scope, weighed (BM25) and ranked with their parents (search/rank.ts); only the
   * first `top` in order when given (every one when undefined).
   */
  rank(terms: QueryTerm[], scope: Scope, plan: SearchPlan, top: number | undefined): TextRanking;
  /** Whether the page may leave a ranked hit out (a filter or a branch it checks itself): then it gets them all. */
  pageMaySkip(plan: SearchPlan, scope: Scope): boolean;
  /** Whether a seq of the vector channel takes part in the fusion (one outside the scope does not); default: all. */
  fusesNear?(seq: number, scope: Scope): boolean;
  /** The page of hits of the ranked seqs (best first), at most `plan.limit`, with the extras the plan asks for. */
  page(seqs: readonly number[], scores: ScoreLookup, plan: SearchPlan, scope: Scope): Page;
}

/** The text ranking of a search and the scope it was taken in. */
export interface ScopedRanking<Scope> {
  scope: Scope;
  text: TextRanking;
}

/** True when a ranked-recall search has nothing to look for: no content term, no hit wanted, no session in reach. */
export function recallFindsNothing(terms: QueryTerm[], plan: SearchPlan): boolean {
  return terms.length === 0 || plan.limit === 0 || outsideSessions(plan);
}

/**
 * The text ranking of `terms` (recallTerms: parsed and bounded by the caller, so a query over the limits is refused
 * even with limit 0); undefined when nothing can match. Only the first `plan.limit` are put in order where the page
 * cannot skip a hit, unless `whole` (the ranking is fused with the vector channel's).
 */
export function rankText<Scope, Page>(
  source: RecallSource<Scope, Page>,
  terms: QueryTerm[],
  plan: SearchPlan,
  whole: boolean,
): ScopedRanking<Scope> | undefined {
  if (recallFindsNothing(terms, plan)) return undefined;
  const scope = source.scope(plan);
  if (scope === undefined) return undefined;
  const top = whole || source.pageMaySkip(plan, scope) ? undefined : plan.limit;
  return { scope, text: source.rank(terms, scope, plan, top) };
}

/** The page of a text ranking, fused first with the vector channel's nearest seqs `near` (best first) if any. */
export function pageOf<Scope, Page>(
  source: RecallSource<Scope, Page>,
  { scope, text }: ScopedRanking<Scope>,
  plan: SearchPlan,
  near?: readonly number[],
): Page {
  if (!near?.length)
    return source.page(
      text.ranked.map(({ seq }) => seq),
      text.scores,
      plan,
      scope,
    );
  const fusing = source.fusesNear === undefined ? near : near.filter((seq) => source.fusesNear!(seq, scope));
  const { seqs, scores } = fuseRankings(text.ranked, fusing);
  return source.page(seqs, scores, plan, scope);
}

/** Ranked recall in one go: the text ranking, fused with `near` if given, and its page; undefined: nothing to find. */
export function recall<Scope, Page>(
  source: RecallSource<Scope, Page>,
  terms: QueryTerm[],
  plan: SearchPlan,
  near?: readonly number[],
): Page | undefined {
  const ranking = rankText(source, terms, plan, near !== undefined && near.length > 0);
  return ranking === undefined ? undefined : pageOf(source, ranking, plan, near);
}

/** The scores of a ranking as a lookup (a backend whose weights are no dense slots). */
export function scoresOf(ranked: readonly RankedCandidate[]): ScoreLookup {
  return new Map(ranked.map(({ seq, score }) => [seq, score]));
}
