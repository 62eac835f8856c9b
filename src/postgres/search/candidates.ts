/**
 * Ranked recall's source on Postgres, the twin of src/sqlite/search/candidates.ts: the newest RECALL_CANDIDATES
 * messages matching any content term (one GIN scan, the session's scope lexeme ANDed in), each with the terms it
 * matches, its parent as the ranking links it (past messages without searchable text: text-parents.ts), length,
 * role, time and session, in one statement, read before the pipeline runs (search/pipeline.ts: its steps are
 * synchronous); search/rank.ts weighs and ranks them, and the page of hits is read in one more (page.ts).
 */

import { ActivePaths } from "../../search/active-paths.js";
import { nearestFor } from "../../search/fusion.js";
import type { QueryLimits } from "../../search/limits.js";
import { hasFilters, passesFilters, type SearchPlan } from "../../search/options.js";
import { type RecallSource, recall, recallFindsNothing, scoresOf } from "../../search/pipeline.js";
import { rankCandidates, recallTerms, weighMatches } from "../../search/rank.js";
import type { VectorChannel } from "../../search/vectors/types.js";
import { SEARCH_CANDIDATES } from "../../store/limits.js";
import type { Executor } from "../connection/client.js";
import type { Tables } from "../schema.js";
import { activePathsCte, isoSql } from "../tree.js";
import { filterParams } from "./filters.js";
import { anyTsquery, sessionLexeme, termTsqueries } from "./fts.js";
import { type Candidate, onPathOf, type PageHit, readPage } from "./page.js";
import { TEXT_PARENT_JOIN, TEXT_PARENT_SEQ, textParentsCte } from "./text-parents.js";

// $1 the tsquery of any term (scoped), $2 each term's own tsquery, $3 how many candidates, $4 the session id (or
// NULL), $5 whether the time filter needs each candidate's time (the page reads it for the hits): the newest matches of any term, each with the terms it matches (1-based) and what ranking needs. One scan
// of the index for all terms: a scan per term (a lateral join) cost ~1.3 ms each on a 3,000-message store.
function candidatesSql(t: Tables, cand = CANDIDATES_BY_MATCH): string {
  return `WITH RECURSIVE ${cand(t)},
  ${textParentsCte(t.messages, t.heads, cand !== CANDIDATES_BY_SEQ)}
  SELECT m.seq::float8 AS seq, (${TEXT_PARENT_SEQ})::float8 AS parent_seq, m.tokens, m.role, m.depth,
    ARRAY(SELECT u.i::integer FROM unnest($2::tsquery[]) WITH ORDINALITY AS u(q, i) WHERE m.search @@ u.q) AS terms,
    CASE WHEN $5::boolean THEN ${isoSql("m.created_at")} END AS created_at, h.session_id, h.num::float8 AS session_num,
    h.leaf_seq::float8 AS leaf_seq, h.leaf_depth, h.message_count,
    (CASE WHEN $4::text IS NULL THEN (SELECT COALESCE(MAX(seq), 0) FROM ${t.messages})
      ELSE (SELECT message_count FROM ${t.heads} WHERE session_id = $4::text) END)::float8 AS documents
  FROM cand JOIN ${t.messages} m ON m.seq = cand.seq JOIN ${t.heads} h ON h.num = m.session_num ${TEXT_PARENT_JOIN}`;
}

/** Candidates of one search: the newest matches of any term (SQLite caps each term; one scan here caps all). */
const RECALL_CANDIDATES = 2 * SEARCH_CANDIDATES;

const CANDIDATES_BY_MATCH = (t: Tables) =>
  `cand AS (SELECT seq, parent_seq FROM ${t.messages} WHERE search @@ $1::tsquery ORDER BY seq DESC LIMIT $3)`;
// The newest matches that pass the role and time filters ($6 roles, $7 since, $8 until; each NULL: none) and,
// with `onPaths`, of the sessions $9 (their numbers) only those on the session's active path (each path walked
// once, depth rows).
const candidatesFiltered = (onPaths: boolean) => (t: Tables) =>
  `${onPaths ? `${activePathsCte(t.messages, t.heads, "$9::bigint[]")},` : ""}
  cand AS (SELECT seq, parent_seq FROM ${t.messages} WHERE search @@ $1::tsquery
    AND ($6::text[] IS NULL OR role = ANY($6::text[]))
    AND ($7::timestamptz IS NULL OR created_at >= $7::timestamptz)
    AND ($8::timestamptz IS NULL OR created_at < $8::timestamptz)
    ${onPaths ? "AND (session_num <> ALL($9::bigint[]) OR seq IN (SELECT seq FROM path))" : ""}
    ORDER BY seq DESC LIMIT $3)`;
// The same columns for given seqs ($1 bigint[]; $3 unused): the vector channel's nearest messages.
const CANDIDATES_BY_SEQ = (t: Tables) =>
  `cand AS (SELECT m.seq, m.parent_seq FROM unnest($1::bigint[]) s(seq) JOIN ${t.messages} m ON m.seq = s.seq
    WHERE $3::integer >= 0)`;

interface CandidateRow {
  terms: number[];
  documents: number;
  seq: number;
  parent_seq: number | null;
  tokens: number;
  role: string;
  depth: number;
  created_at: string | null;
  session_id: string;
  session_num: number;
  leaf_seq: number | null;
  leaf_depth: number;
  message_count: number;
}

/** The hits of a ranked-recall search, best first, at most `plan.limit`. */
export async function recallSearch(
  executor: Executor,
  t: Tables,
  query: string,
  plan: SearchPlan,
  limits: QueryLimits,
  vectors?: VectorChannel,
): Promise<PageHit[]> {
  // Parsed (and so bounded) before anything else: a query over the limits is refused even with limit 0.
  const terms = recallTerms(query, limits);
  if (recallFindsNothing(terms, plan)) return [];
  const near = await nearestFor(vectors, query, plan);
  // The scope goes into the index scan, so the newest matches taken are the scope's own: a set of sessions
  // filtered after the scan found nothing for sessions older than the store's newest matches.
  const scope =
    plan.sessionId !== undefined
      ? sessionLexeme(plan.sessionId)
      : plan.sessionIds === undefined
        ? undefined
        : [...plan.sessionIds].map(sessionLexeme);
  // A term no document can contain (it folds to nothing) finds nothing; the other terms still search.
  const { numbers, queries } = termTsqueries(terms);
  if (numbers.length === 0 && !near?.length) return [];
  const tsqueries: [string, string[]] = [anyTsquery(queries, scope), queries];
  const rows = numbers.length === 0 ? [] : await candidateRows(executor, t, plan, tsqueries);
  const collect = (found: CandidateRow[]) =>
    collectCandidates(executor, t, plan, terms.length, numbers, found, near);
  let { nodes, matches, documents, visible, returnable } = await collect(rows);
  // An active-branch search whose newest matches lie mostly off their sessions' active paths (a long exploration
  // the conversation came back from): the window held too few hits, so the newest matches are read again with the
  // sessions that crowded it kept to their paths (each read can bring more such sessions, so they are bounded).
  if (plan.activeOnly && rows.length >= RECALL_CANDIDATES) {
    const paths = new ActivePaths();
    const short = () => [...nodes.keys()].filter(returnable).length < plan.limit;
    const crowding = () =>
      [...nodes.values()].filter((n) => n.branched).map((n) => ({ num: n.sessionNum, depth: n.leafDepth }));
    while (short() && paths.add(crowding())) {
      await moreRows(executor, t, plan, tsqueries, rows, paths.kept);
      ({ nodes, matches, documents, visible, returnable } = await collect(rows));
    }
  }
  return (
    (await recall(
      postgresSource(executor, t, { nodes, matches, documents, visible, returnable }),
      terms,
      plan,
      near,
    )) ?? []
  );
}

/** The source over the candidates read for one search: the filters act in the ranking, so the page skips none. */
function postgresSource(
  executor: Executor,
  t: Tables,
  collected: Collected,
): RecallSource<Collected, Promise<PageHit[]>> {
  return {
    scope: () => collected,
    rank: (_terms, { nodes, matches, documents, visible, returnable }, _plan, top) => {
      // A candidate that takes no part (off its active path) weighs nothing, not even in a term's match count.
      const lengthOf = (seq: number) =>
        visible === undefined || visible(seq) ? nodes.get(seq)?.tokens : undefined;
      const ranked = rankCandidates(
        weighMatches(matches, lengthOf, documents),
        (seq) => nodes.get(seq)?.parent,
        {
          ...(visible ? { visible } : {}),
          returnable,
          ...(top === undefined ? {} : { top }),
        },
      );
      return { ranked, scores: scoresOf(ranked) };
    },
    pageMaySkip: () => false,
    fusesNear: (seq, { returnable }) => returnable(seq),
    page: (seqs, scores, plan, { nodes }) =>
      readPage(
        executor,
        t,
        seqs.slice(0, plan.limit).map((seq) => nodes.get(seq)!),
        scores,
      ),
  };
}

/** The candidates of a search by seq, each term's matches, and which candidates take part and may be returned. */
interface Collected {
  nodes: Map<number, Node>;
  matches: number[][];
  documents: number;
  visible: ((seq: number) => boolean) | undefined;
  returnable: (seq: number) => boolean;
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
  rows: readonly CandidateRow[],
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
    nodes.set(seq, candidateOf(row));
  }
  // An active-branch search of one session counts its active path's messages (every row here is the session's).
  const [first] = nodes.values();
  const documents =
    plan.activeOnly && plan.sessionId !== undefined
      ? first === undefined || first.leafSeq === null
        ? 0
        : first.leafDepth + 1
      : Math.max(Number(rows[0]?.documents ?? 0), nodes.size);
  const nearOnly = (near ?? []).filter((seq) => !nodes.has(seq));
  if (nearOnly.length > 0) {
    const params = [nearOnly, [], 0, plan.sessionId ?? null, hasTimeFilter(plan)];
    for (const row of await executor.query<CandidateRow>(candidatesSql(t, CANDIDATES_BY_SEQ), params)) {
      if (plan.sessionIds !== undefined && !plan.sessionIds.has(row.session_id)) continue;
      if (plan.sessionId !== undefined && row.session_id !== plan.sessionId) continue;
      nodes.set(Number(row.seq), candidateOf(row));
    }
  }
  let visible: ((seq: number) => boolean) | undefined;
  if (plan.activeOnly) {
    const branched = [...nodes.values()].filter((node) => node.branched);
    const onPath = await onPathOf(executor, t, branched);
    visible = (seq) => !nodes.get(seq)?.branched || onPath.get(seq) === true;
  }
  const returnable = (seq: number) => {
    const node = nodes.get(seq);
    return node !== undefined && passesFilters(plan, node.role, node.createdAt) && (visible?.(seq) ?? true);
  };
  return { nodes, matches, documents, visible, returnable };
}

/**
 * The newest RECALL_CANDIDATES matches of any term ($1 the scoped tsquery, $2 each term's). The filters pick among
 * the ranked candidates, after the turns they leave out have lent their weight to their neighbours; but where the
 * newest matches fill the window, the ones a role or time filter asks for may all be older, so the filter's own
 * newest matches are read as well.
 */
async function candidateRows(
  executor: Executor,
  t: Tables,
  plan: SearchPlan,
  tsqueries: [string, string[]],
): Promise<CandidateRow[]> {
  const [tsquery, queries] = tsqueries;
  const params = [tsquery, queries, RECALL_CANDIDATES, plan.sessionId ?? null, hasTimeFilter(plan)];
  const rows = await executor.query<CandidateRow>(candidatesSql(t), params);
  if (rows.length >= RECALL_CANDIDATES && hasFilters(plan))
    await moreRows(executor, t, plan, tsqueries, rows);
  return rows;
}

/**
 * Adds to `rows` the newest matches that pass the plan's filters and, with `activePaths`, of those sessions only
 * the ones on their active path.
 */
async function moreRows(
  executor: Executor,
  t: Tables,
  plan: SearchPlan,
  [tsquery, queries]: [string, string[]],
  rows: CandidateRow[],
  activePaths?: readonly number[],
): Promise<void> {
  // Null: no stored message can pass the filters (see filters.ts).
  const filters = filterParams(plan);
  if (filters === null) return;
  const params = [
    tsquery,
    queries,
    RECALL_CANDIDATES,
    plan.sessionId ?? null,
    hasTimeFilter(plan),
    filters.roles,
    filters.since,
    filters.until,
    ...(activePaths === undefined ? [] : [activePaths]),
  ];
  const seen = new Set(rows.map((row) => Number(row.seq)));
  const sql = candidatesSql(t, candidatesFiltered(activePaths !== undefined));
  for (const row of await executor.query<CandidateRow>(sql, params)) {
    if (!seen.has(Number(row.seq))) rows.push(row);
  }
}

const hasTimeFilter = (plan: SearchPlan) => plan.since !== undefined || plan.until !== undefined;

type Node = Candidate & { tokens: number; parent: number | null };

function candidateOf(row: CandidateRow): Node {
  return {
    seq: Number(row.seq),
    parent: row.parent_seq === null ? null : Number(row.parent_seq),
    tokens: Number(row.tokens),
    role: row.role,
    createdAt: row.created_at ?? undefined,
    depth: Number(row.depth),
    sessionId: row.session_id,
    sessionNum: Number(row.session_num),
    leafSeq: row.leaf_seq === null ? null : Number(row.leaf_seq),
    leafDepth: Number(row.leaf_depth),
    branched: Number(row.message_count) !== Number(row.leaf_depth) + 1 || row.leaf_seq === null,
  };
}
