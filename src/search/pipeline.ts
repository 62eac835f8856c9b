/**
 * Ranked recall, written once over a backend's `RecallSource`: terms → scope → candidates read, weighed and ranked →
 * the active-path rounds → fusion with the vector channel → page. The backend answers the steps that touch its
 * storage (which rows are in scope, each term's candidates with their parents and lengths, those read again with
 * sessions kept to their active paths, the page of hits and its extras); the order, when to read again, the cut to
 * the page and the fusion are decided here, the same way for every backend. The steps come apart at the vector
 * channel (`rankText`, then `pageOf`), because a backend reads the ranking and the page in its own transactions
 * around the channel's awaited answer; `recall` runs them in a row. An engine that answers later (Postgres) runs
 * the same steps through `rankTextAsync` and `recallAsync`.
 */
import type { FactSource } from "../contract/facts.js";
import { activePathRounds, type BranchedSession } from "./active-paths.js";
import { authorBand, authorsFirst } from "./authors.js";
import { type FactLifts, factSourceKey, fuseFacts, liftsOf } from "./fact-fusion.js";
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

/**
 * What a backend answers for ranked recall (the pipeline above decides the rest). `Reads` are the candidates read
 * for one search; `Step` is how a read comes back: the reads themselves, or a promise of them on an engine that
 * answers later.
 */
export interface RecallSource<Scope, Reads, Page, Step extends Reads | Promise<Reads> = Reads> {
  /** The search's scope (sessions, branch, the rows a term's rarity is counted among); undefined: nothing to find. */
  scope(plan: SearchPlan): Scope | undefined;
  /** Each term's candidates within the scope, with their parents and lengths. */
  read(terms: QueryTerm[], scope: Scope, plan: SearchPlan): Step;
  /**
   * The candidates read, weighed (BM25) and ranked with their parents (search/rank.ts); only the first `top` in
   * order when given (every one when undefined).
   */
  rank(reads: Reads, scope: Scope, plan: SearchPlan, top: number | undefined): TextRanking;
  /** Whether the page may leave a ranked hit out (a filter or a branch it checks itself): then it gets them all. */
  pageMaySkip(plan: SearchPlan, scope: Scope): boolean;
  /** Whether a seq of the vector channel takes part in the fusion (one outside the scope does not); default: all. */
  fusesNear?(seq: number, scope: Scope, reads: Reads): boolean;
  /**
   * The seq of a fact's source message when it is in the search's scope (its sessions, its owner's, its active
   * paths), else undefined; a source without it takes no fact channel (search/facts.ts).
   */
  seqOf?(source: FactSource, scope: Scope, reads: Reads, plan: SearchPlan): number | undefined;
  /**
   * `seqOf` for all the facts' sources at once, on an engine that answers later: `recallAsync` awaits it before the
   * page, which looks each source up in it (by `factSourceKey`; absent: outside the search's scope).
   */
  seqsOf?(
    sources: readonly FactSource[],
    scope: Scope,
    reads: Reads,
    plan: SearchPlan,
  ): Promise<ReadonlyMap<string, number>>;
  /**
   * The authors of messages `seqs` (a message's `metadata.author`, read from its stored JSON, opened where sealed),
   * by seq; one without an author is left out (search/authors.ts).
   */
  authorsOf?(seqs: readonly number[], scope: Scope, reads: Reads): ReadonlyMap<number, string>;
  /** `authorsOf` on an engine that answers later: `recallAsync` awaits it before the fusion. */
  authorsOfAsync?(seqs: readonly number[], scope: Scope, reads: Reads): Promise<ReadonlyMap<number, string>>;
  /** The page of hits of the ranked seqs (best first), at most `plan.limit`, with the extras the plan asks for. */
  page(seqs: readonly number[], scores: ScoreLookup, plan: SearchPlan, scope: Scope, reads: Reads): Page;
  /** How to read again with sessions kept to their active paths; none: the reads hold every match in scope. */
  rereads?: ActivePathRereads<Scope, Reads, Step>;
}

/**
 * What a source whose reads are windows of the newest matches answers, so that an active-branch search whose window
 * other branches crowded reads again (the rounds and their bounds: search/active-paths.ts).
 */
export interface ActivePathRereads<Scope, Reads, Step> {
  /** Whether a window of newest matches was full: only then can older hits on the active paths be left out. */
  full(reads: Reads): boolean;
  /** How many hits the ranking holds that the page would return (the filters' and the branch's). */
  found(reads: Reads, text: TextRanking, plan: SearchPlan): number;
  /** The sessions with other branches among the candidates read, with their leaf's depth. */
  branched(reads: Reads, scope: Scope): Iterable<BranchedSession>;
  /** `reads` read again with the sessions `paths` (their numbers) kept to their active paths inside the read. */
  reread(reads: Reads, scope: Scope, plan: SearchPlan, paths: readonly number[]): Step;
}

/** The text ranking of a search, the scope it was taken in and the candidates it was taken from. */
export interface ScopedRanking<Scope, Reads> {
  scope: Scope;
  reads: Reads;
  text: TextRanking;
}

/** True when a ranked-recall search has nothing to look for: no content term, no hit wanted, no session in reach. */
export function recallFindsNothing(terms: QueryTerm[], plan: SearchPlan): boolean {
  return terms.length === 0 || plan.limit === 0 || outsideSessions(plan);
}

/**
 * The steps of a text ranking, written once for both kinds of engine: it yields each read (`Step`) and takes what
 * it read. An active-branch search whose window of newest matches was full and held too few hits reads again with
 * the sessions that crowded it kept to their active paths, in the rounds of activePathRounds.
 */
function* rankSteps<Scope, Reads, Page, Step extends Reads | Promise<Reads>>(
  source: RecallSource<Scope, Reads, Page, Step>,
  terms: QueryTerm[],
  plan: SearchPlan,
  whole: boolean,
): Generator<Step, ScopedRanking<Scope, Reads> | undefined, Reads> {
  if (recallFindsNothing(terms, plan)) return undefined;
  const scope = source.scope(plan);
  if (scope === undefined) return undefined;
  // The authors' band (search/authors.ts) is put in order whole, as the page is.
  const top =
    whole || source.pageMaySkip(plan, scope) ? undefined : plan.authors ? authorBand(plan.limit) : plan.limit;
  const rankOf = (reads: Reads) => ({ scope, reads, text: source.rank(reads, scope, plan, top) });
  let answer = rankOf(yield source.read(terms, scope, plan));
  const { rereads } = source;
  // Only a window of newest matches that was full can have left hits on the active paths behind it.
  if (rereads === undefined || !plan.activeOnly || !rereads.full(answer.reads)) return answer;
  const rounds = activePathRounds(answer, {
    short: ({ reads, text }) => rereads.found(reads, text, plan) < plan.limit,
    crowding: ({ reads }) => rereads.branched(reads, scope),
  });
  for (let round = rounds.next(); ; round = rounds.next(answer)) {
    if (round.done) return round.value;
    answer = rankOf(yield rereads.reread(answer.reads, scope, plan, round.value));
  }
}

/**
 * The text ranking of `terms` (recallTerms: parsed and bounded by the caller, so a query over the limits is refused
 * even with limit 0); undefined when nothing can match. Only the first `plan.limit` are put in order where the page
 * cannot skip a hit, unless `whole` (the ranking is fused with the vector channel's).
 */
export function rankText<Scope, Reads, Page>(
  source: RecallSource<Scope, Reads, Page>,
  terms: QueryTerm[],
  plan: SearchPlan,
  whole: boolean,
): ScopedRanking<Scope, Reads> | undefined {
  const steps = rankSteps(source, terms, plan, whole);
  let step = steps.next();
  while (!step.done) step = steps.next(step.value);
  return step.value;
}

/** rankText over a source whose reads answer later. */
export async function rankTextAsync<Scope, Reads, Page>(
  source: RecallSource<Scope, Reads, Page, Promise<Reads>>,
  terms: QueryTerm[],
  plan: SearchPlan,
  whole: boolean,
): Promise<ScopedRanking<Scope, Reads> | undefined> {
  const steps = rankSteps(source, terms, plan, whole);
  let step = steps.next();
  while (!step.done) step = steps.next(await step.value);
  return step.value;
}

/** What a search fuses with its text ranking: the vector channel's nearest seqs, the fact channel's facts. */
export interface Channels {
  /** The query as asked, whose words name an author (search/authors.ts); undefined: no author is read. */
  query?: string | undefined;
  /** The vector channel's nearest seqs, best first. */
  near?: readonly number[] | undefined;
  /** The fact channel's facts, best first; their sources in scope are filled in by the page (`seqs`). */
  facts?: FactLifts | undefined;
}

/**
 * The page of a text ranking, fused first with the vector channel's nearest seqs if any, then with the facts whose
 * sources are in scope (`sourceSeqs`, read at once before, else the source's `seqOf`; none in scope: the order is
 * the text's, untouched).
 */
export function pageOf<Scope, Reads, Page, Step extends Reads | Promise<Reads>>(
  source: RecallSource<Scope, Reads, Page, Step>,
  { scope, reads, text }: ScopedRanking<Scope, Reads>,
  plan: SearchPlan,
  near?: readonly number[],
  facts?: FactLifts,
  sourceSeqs?: ReadonlyMap<string, number>,
): Page {
  let seqs = text.ranked.map(({ seq }) => seq);
  let scores: ScoreLookup = text.scores;
  if (near?.length) {
    const fusing =
      source.fusesNear === undefined ? near : near.filter((seq) => source.fusesNear!(seq, scope, reads));
    ({ seqs, scores } = fuseRankings(text.ranked, fusing));
  }
  const seqOf =
    sourceSeqs !== undefined
      ? (s: FactSource) => sourceSeqs.get(factSourceKey(s))
      : source.seqOf === undefined
        ? undefined
        : (s: FactSource) => source.seqOf!(s, scope, reads, plan);
  if (facts !== undefined && seqOf !== undefined) {
    const { seqs: inScope } = liftsOf(facts.hits, seqOf);
    facts.seqs = inScope;
    if (inScope.some((lift) => lift.length > 0)) {
      // A strong fact lifts a turn that matches a word, within the word counts read here (fact-fusion.ts).
      facts.turnMatched = bestTurnMatched(text.ranked);
      ({ seqs, scores } = fuseFacts(
        seqs,
        facts,
        termsMatchedAt(text.ranked, near?.length ? seqs : undefined),
      ));
    }
  }
  return source.page(seqs, scores, plan, scope, reads);
}

/** The most query terms a turn of the text ranking matches by itself (0 for none). */
function bestTurnMatched(ranked: readonly RankedCandidate[]): number {
  let best = 0;
  for (const { matched } of ranked) if (matched > best) best = matched;
  return best;
}

/**
 * The terms matched by the turn at each place of the order fused with the facts: the text ranking's own (its
 * places), or, once the vector channel reordered it (`fused`), each seq's by a lookup (0 for one no word reaches).
 */
function termsMatchedAt(
  ranked: readonly RankedCandidate[],
  fused: readonly number[] | undefined,
): (rank: number) => number {
  if (fused === undefined) return (rank) => ranked[rank]?.matched ?? 0;
  const matched = new Map(ranked.map((candidate) => [candidate.seq, candidate.matched]));
  return (rank) => matched.get(fused[rank]!) ?? 0;
}

/** Whether a search fuses another channel with its text ranking (then the whole ranking is put in order). */
function fusing({ near, facts }: Channels): boolean {
  return (near !== undefined && near.length > 0) || (facts !== undefined && facts.hits.length > 0);
}

/**
 * The seqs of a text ranking whose authors the author rule reads (search/authors.ts): its first authorBand; none
 * when the search takes no author (`authors: false`, or no query to name one).
 */
export function authorSeqs(
  { text }: ScopedRanking<unknown, unknown>,
  plan: SearchPlan,
  query: string | undefined,
): number[] {
  if (!plan.authors || query === undefined) return [];
  return text.ranked.slice(0, authorBand(plan.limit)).map(({ seq }) => seq);
}

/** A text ranking with the named author's turns first within their tiers (search/authors.ts). */
export function withAuthors<Scope, Reads>(
  ranking: ScopedRanking<Scope, Reads>,
  plan: SearchPlan,
  query: string | undefined,
  authors: ReadonlyMap<number, string>,
): ScopedRanking<Scope, Reads> {
  if (query === undefined || authors.size === 0) return ranking;
  const ranked = authorsFirst(ranking.text.ranked, authors, query, authorBand(plan.limit));
  return ranked === ranking.text.ranked
    ? ranking
    : { ...ranking, text: { ...ranking.text, ranked: [...ranked] } };
}

/** `ranking` with its authors read by the source's `authorsOf` and the author rule applied. */
export function authorsApplied<Scope, Reads, Page>(
  source: RecallSource<Scope, Reads, Page, Reads | Promise<Reads>>,
  ranking: ScopedRanking<Scope, Reads>,
  plan: SearchPlan,
  query: string | undefined,
): ScopedRanking<Scope, Reads> {
  const seqs = authorSeqs(ranking, plan, query);
  if (seqs.length === 0 || source.authorsOf === undefined) return ranking;
  return withAuthors(ranking, plan, query, source.authorsOf(seqs, ranking.scope, ranking.reads));
}

/** Ranked recall in one go: the text ranking, fused with the channels given, and its page; undefined: nothing. */
export function recall<Scope, Reads, Page>(
  source: RecallSource<Scope, Reads, Page>,
  terms: QueryTerm[],
  plan: SearchPlan,
  channels: Channels = {},
): Page | undefined {
  const ranked = rankText(source, terms, plan, fusing(channels));
  if (ranked === undefined) return undefined;
  const ranking = authorsApplied(source, ranked, plan, channels.query);
  return pageOf(source, ranking, plan, channels.near, channels.facts);
}

/** recall over a source whose reads answer later. */
export async function recallAsync<Scope, Reads, Page>(
  source: RecallSource<Scope, Reads, Page, Promise<Reads>>,
  terms: QueryTerm[],
  plan: SearchPlan,
  channels: Channels = {},
): Promise<Page | undefined> {
  let ranking = await rankTextAsync(source, terms, plan, fusing(channels));
  if (ranking === undefined) return undefined;
  const authorsOf = source.authorsOfAsync;
  const seqs = authorSeqs(ranking, plan, channels.query);
  if (seqs.length > 0 && authorsOf !== undefined)
    ranking = withAuthors(ranking, plan, channels.query, await authorsOf(seqs, ranking.scope, ranking.reads));
  const { facts } = channels;
  const sourceSeqs =
    facts === undefined || source.seqsOf === undefined
      ? undefined
      : await source.seqsOf(
          facts.hits.flatMap(({ fact }) => fact.sources),
          ranking.scope,
          ranking.reads,
          plan,
        );
  return pageOf(source, ranking, plan, channels.near, facts, sourceSeqs);
}

/** The scores of a ranking as a lookup (a backend whose weights are no dense slots). */
export function scoresOf(ranked: readonly RankedCandidate[]): ScoreLookup {
  return new Map(ranked.map(({ seq, score }) => [seq, score]));
}
