/**
 * Ranked recall's source on Postgres, the twin of src/sqlite/search/candidates.ts: the candidates of a search are
 * the rows of one statement (candidate-rows.ts), read when search/pipeline.ts asks for them (through `recallAsync`:
 * each read is awaited), with the vector channel's nearest messages; search/rank.ts weighs and ranks them, and the
 * page of hits is read in one more statement (page.ts).
 */

import { messageRecallTerms, timeTermCount } from "../../search/date-terms.js";
import type { FactLifts } from "../../search/fact-fusion.js";
import { nearestFor } from "../../search/fusion.js";
import type { QueryLimits } from "../../search/limits.js";
import { activePathLength } from "../../search/on-path.js";
import { hasFilters, passesFilters, type SearchPlan } from "../../search/options.js";
import { type RecallSource, recallAsync, recallFindsNothing, scoresOf } from "../../search/pipeline.js";
import { rankCandidates, weighMatches } from "../../search/rank.js";
import type { VectorChannel } from "../../search/vectors/types.js";
import type { Executor } from "../../sql/engines/postgres/client.js";
import { anyTsquery, sessionLexeme, termTsqueries, withinOwner } from "../../sql/engines/postgres/fts.js";
import type { Tables } from "../../sql/engines/postgres/tables.js";
import { searchBlinds } from "../../sql/search/postgres-blind.js";
import { onPathOf, type PageHit, readAuthors, readPage } from "../../sql/search/postgres-page.js";
import {
  type CandidateRow,
  candidateRows,
  moreRows,
  type Node,
  nearRows,
  nodeOf,
  RECALL_CANDIDATES,
  type TermTsqueries,
} from "./candidate-rows.js";
import { sourceSeqs } from "./fact-sources.js";
import { fanOutCandidateRows } from "./fan-out.js";

/**
 * The hits of a ranked-recall search, best first, at most `plan.limit`, and the fact channel's answer when it took
 * one (a search with `facts: "hits"` returns the facts in scope among them).
 */
export async function recallSearch(
  executor: Executor,
  t: Tables,
  query: string,
  plan: SearchPlan,
  limits: QueryLimits,
  vectors?: VectorChannel,
  factChannel?: FactChannel,
): Promise<{ hits: PageHit[]; facts?: FactLifts | undefined }> {
  // Parsed (and so bounded) before anything else: a query over the limits is refused even with limit 0.
  const terms = messageRecallTerms(query, limits, undefined, plan.times);
  if (recallFindsNothing(terms, plan)) return { hits: [] };
  const near = await nearestFor(vectors, query, plan);
  const facts = await factChannel?.(query, plan);
  // The scope goes into the index scan, so the newest matches taken are the scope's own: a set of sessions
  // filtered after the scan found nothing for sessions older than the store's newest matches.
  const scope =
    plan.sessionId !== undefined
      ? sessionLexeme(plan.sessionId)
      : plan.sessionIds === undefined
        ? undefined
        : [...plan.sessionIds].map(sessionLexeme);
  // A term no document can contain (it folds to nothing) finds nothing; the other terms still search. The owners in
  // scope with a key match each term as their blind tokens too (blind.ts).
  const { numbers, queries } = termTsqueries(terms, await searchBlinds(executor.query, t, plan));
  const any = withinOwner(anyTsquery(queries, scope), plan.owner) as string;
  const termQueries: TermQueries = { numbers, tsqueries: [any, queries] };
  const source = postgresSource(executor, t, termQueries, near, facts !== undefined, timeTermCount(terms));
  return { hits: (await recallAsync(source, terms, plan, { near, facts, query })) ?? [], facts };
}

/** A store's fact channel for a search (search/facts.ts `factChannel`), undefined when it takes none. */
export type FactChannel = (query: string, plan: SearchPlan) => Promise<FactLifts | undefined>;

/** The tsqueries of a search's terms, and which term each of them is (a term that folds to nothing has none). */
interface TermQueries {
  numbers: readonly number[];
  tsqueries: TermTsqueries;
}

/**
 * The source of one search: the candidates are read with the filters, so the page skips none; an active-branch
 * search whose window was full reads the newest matches again with the sessions that crowded it kept to their
 * paths (search/pipeline.ts decides when).
 */
function postgresSource(
  executor: Executor,
  t: Tables,
  { numbers, tsqueries }: TermQueries,
  near: readonly number[] | undefined,
  facts: boolean,
  lifts: number,
): RecallSource<TermQueries, Collected, Promise<PageHit[]>, Promise<Collected>> {
  const collect = (plan: SearchPlan, termCount: number, rows: CandidateRow[]) =>
    collectCandidates(executor, t, plan, termCount, numbers, rows, near);
  return {
    // A query whose terms all fold to nothing still finds the turns its facts name.
    scope: () => (numbers.length === 0 && !near?.length && !facts ? undefined : { numbers, tsqueries }),
    read: async (terms, _scope, plan) =>
      collect(
        plan,
        terms.length,
        numbers.length === 0
          ? []
          : acrossShards(t, plan)
            ? await acrossRows(executor, t, plan, tsqueries)
            : await candidateRows(executor, t, plan, tsqueries),
      ),
    rank: ({ nodes, matches, documents, visible, returnable }, _scope, _plan, top) => {
      // A candidate that takes no part (off its active path) weighs nothing, not even in a term's match count.
      const lengthOf = (seq: number) =>
        visible === undefined || visible(seq) ? nodes.get(seq)?.tokens : undefined;
      const ranked = rankCandidates(
        weighMatches(matches, lengthOf, documents),
        (seq) => nodes.get(seq)?.parent,
        {
          ...(visible ? { visible } : {}),
          returnable,
          lifts,
          ...(top === undefined ? {} : { top }),
        },
      );
      return { ranked, scores: scoresOf(ranked) };
    },
    pageMaySkip: () => false,
    fusesNear: (seq, _scope, { returnable }) => returnable(seq),
    authorsOfAsync: (seqs, _scope, { nodes }) =>
      readAuthors(
        executor,
        t,
        seqs.flatMap((seq) => nodes.get(seq) ?? []),
      ),
    seqsOf: (sources, _scope, { nodes, onPath }, plan) =>
      sourceSeqs(executor, t, plan, sources, nodes, onPath),
    // The ranked seqs are all returnable; a turn only a fact brings may not be (a role or time filter).
    page: (seqs, scores, plan, _scope, { nodes, returnable }) =>
      readPage(
        executor,
        t,
        seqs
          .filter(returnable)
          .slice(0, plan.limit)
          .map((seq) => nodes.get(seq)!),
        scores,
      ),
    rereads: {
      full: ({ rows }) => rows.length >= RECALL_CANDIDATES,
      found: ({ nodes, returnable }) => [...nodes.keys()].filter(returnable).length,
      branched: ({ nodes }) =>
        [...nodes.values()].filter((n) => n.branched).map((n) => ({ num: n.sessionNum, depth: n.leafDepth })),
      reread: async ({ rows, matches }, _scope, plan, paths) => {
        if (!acrossShards(t, plan)) await moreRows(executor, t, plan, tsqueries, rows, paths);
        else addRows(rows, await fanOutCandidateRows(executor, t, plan, tsqueries, true, paths, rows));
        return collect(plan, matches.length, rows);
      },
    },
  };
}

/** A search across sessions in the Citus layout: its candidates are read by fan-out.ts. */
const acrossShards = (t: Tables, plan: SearchPlan) => t.layout.readsPerShard && plan.sessionId === undefined;

/** Candidate rows across shards: the newest matches, and where they fill the window the filters' own too. */
async function acrossRows(
  executor: Executor,
  t: Tables,
  plan: SearchPlan,
  tsqueries: TermTsqueries,
): Promise<CandidateRow[]> {
  const rows = await fanOutCandidateRows(executor, t, plan, tsqueries, false);
  if (rows.length >= RECALL_CANDIDATES && hasFilters(plan))
    addRows(rows, await fanOutCandidateRows(executor, t, plan, tsqueries, true));
  return rows;
}

/** Adds to `rows` the rows of `more` it does not hold yet. */
function addRows(rows: CandidateRow[], more: readonly CandidateRow[]): void {
  const seen = new Set(rows.map((row) => Number(row.seq)));
  for (const row of more) if (!seen.has(Number(row.seq))) rows.push(row);
}

/**
 * The candidates of a search by seq, each term's matches, which candidates take part and may be returned, and the
 * rows they were made of (a read again adds to them).
 */
interface Collected {
  rows: CandidateRow[];
  nodes: Map<number, Node>;
  matches: number[][];
  documents: number;
  visible: ((seq: number) => boolean) | undefined;
  returnable: (seq: number) => boolean;
  /** In an active-branch search, whether each candidate of a session with other branches lies on its path. */
  onPath: Map<number, boolean>;
}

/**
 * The candidates of `rows` (matches of the `termCount` terms, each row's ordinals mapped through `numbers`) and
 * of the vector channel's nearest messages `near`, with what the ranking needs: off-path candidates of sessions
 * with other branches take no part in an active-branch search at all, and only candidates the filters accept are
 * returned.
 */
async function collectCandidates(
  executor: Executor,
  t: Tables,
  plan: SearchPlan,
  termCount: number,
  numbers: readonly number[],
  rows: CandidateRow[],
  near: readonly number[] | undefined,
): Promise<Collected> {
  const nodes = new Map<number, Node>();
  const matches: number[][] = Array.from({ length: termCount }, () => []);
  for (const row of rows) {
    // The scope lexeme is a hash: a collision could bring another session's rows, which are dropped here.
    if (plan.sessionId !== undefined && row.session_id !== plan.sessionId) continue;
    if (plan.sessionIds !== undefined && !plan.sessionIds.has(row.session_id)) continue;
    const seq = Number(row.seq);
    for (const ordinal of row.terms) matches[numbers[ordinal - 1]!]!.push(seq);
    nodes.set(seq, nodeOf(row));
  }
  // An active-branch search of one session counts its active path's messages (every row here is the session's).
  const [first] = nodes.values();
  const documents =
    plan.activeOnly && plan.sessionId !== undefined
      ? activePathLength(first?.leafSeq ?? null, first?.leafDepth ?? null)
      : Math.max(Number(rows[0]?.documents ?? 0), nodes.size);
  const nearOnly = (near ?? []).filter((seq) => !nodes.has(seq));
  if (nearOnly.length > 0) {
    for (const row of await nearRows(executor, t, plan, nearOnly)) {
      if (plan.sessionIds !== undefined && !plan.sessionIds.has(row.session_id)) continue;
      if (plan.sessionId !== undefined && row.session_id !== plan.sessionId) continue;
      nodes.set(Number(row.seq), nodeOf(row));
    }
  }
  const onPath = plan.activeOnly
    ? await onPathOf(
        executor,
        t,
        [...nodes.values()].filter((node) => node.branched),
      )
    : new Map<number, boolean>();
  const visible = plan.activeOnly
    ? (seq: number) => !nodes.get(seq)?.branched || onPath.get(seq) === true
    : undefined;
  const returnable = (seq: number) => {
    const node = nodes.get(seq);
    return node !== undefined && passesFilters(plan, node.role, node.createdAt) && (visible?.(seq) ?? true);
  };
  return { rows, nodes, matches, documents, visible, returnable, onPath };
}
