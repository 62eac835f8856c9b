/**
 * The candidate statement of ranked recall on Postgres (candidates.ts builds the candidates from its rows): the
 * newest RECALL_CANDIDATES messages matching any content term (one GIN scan, the session's scope lexeme ANDed in),
 * each with the terms it matches, its parent as the ranking links it (past messages without searchable text:
 * text-parents.ts), length, role, time and session, in one statement; the same for the newest matches that pass the
 * filters or keep to sessions' active paths, and for the vector channel's nearest messages.
 */

import { hasFilters, type SearchPlan } from "../../search/options.js";
import type { Executor } from "../../sql/engines/postgres/client.js";
import type { Tables } from "../../sql/engines/postgres/tables.js";
import { activePathsCte, isoSql, type Scope } from "../../sql/engines/postgres/tree.js";
import { filterParams } from "../../sql/search/postgres-filters.js";
import { type Candidate, type CandidateColumns, candidateOf } from "../../sql/search/postgres-page.js";
import { TEXT_PARENT_JOIN, TEXT_PARENT_SEQ, textParentsCte } from "../../sql/search/postgres-text-parents.js";
import { SEARCH_CANDIDATES } from "../../store/limits.js";

// $1 the tsquery of any term (scoped), $2 each term's own tsquery, $3 how many candidates, $4 the session id (or
// NULL), $5 whether the time filter needs each candidate's time (the page reads it for the hits): the newest matches of any term, each with the terms it matches (1-based) and what ranking needs. One scan
// of the index for all terms: a scan per term (a lateral join) cost ~1.3 ms each on a 3,000-message store.
// In the Citus layout every statement here runs on one shard (a search across sessions: fan-out.ts): every table
// reference names $4, one session, or with `shard` several sessions of one shard ($4 text[]; their documents are
// left to the caller, 0 here).
export function candidatesSql(t: Tables, cand = CANDIDATES_BY_MATCH, shard = false): string {
  const own = shard ? t.layout.sessionsScope("$4::text[]") : t.layout.scope("$4::text");
  // One session on Citus: its head is joined already (h), and whether it has overlays comes along, so the page
  // read is a query of one table that Citus plans on its fast path (page.ts); each sub-query costs the coordinator
  // planning time on every call.
  const documents = shard
    ? "0::float8 AS documents"
    : t.layout.readsPerShard
      ? `h.message_count::float8 AS documents,
    EXISTS (SELECT 1 FROM ${t.compactions} c WHERE c.session_id = $4::text) AS overlaid`
      : `(CASE WHEN $4::text IS NULL THEN (SELECT COALESCE(MAX(seq), 0) FROM ${t.messages})
      ELSE (SELECT message_count FROM ${t.heads} WHERE session_id = $4::text) END)::float8 AS documents`;
  return `WITH RECURSIVE ${cand(t, own)},
  ${textParentsCte(t.messages, t.heads, cand !== CANDIDATES_BY_SEQ, own, !shard)}
  SELECT m.seq::float8 AS seq, (${TEXT_PARENT_SEQ})::float8 AS parent_seq, m.tokens, m.role, m.depth,
    ARRAY(SELECT u.i::integer FROM unnest($2::tsquery[]) WITH ORDINALITY AS u(q, i) WHERE m.search @@ u.q) AS terms,
    CASE WHEN $5::boolean THEN ${isoSql("m.created_at")} END AS created_at, h.session_id, h.num::float8 AS session_num,
    h.leaf_seq::float8 AS leaf_seq, h.leaf_depth, h.message_count, ${documents}
  FROM cand JOIN ${t.messages} m ON m.seq = cand.seq${own("m")}
    JOIN ${t.heads} h ON h.num = m.session_num${own("h")} ${TEXT_PARENT_JOIN}`;
}

/** Candidates of one search: the newest matches of any term (SQLite caps each term; one scan here caps all). */
export const RECALL_CANDIDATES = 2 * SEARCH_CANDIDATES;

/** The `cand(seq, parent_seq)` CTE of a candidate statement, its per-session tables scoped by `own`. */
type CandidatesCte = (t: Tables, own: Scope) => string;

const CANDIDATES_BY_MATCH: CandidatesCte = (t, own) =>
  `cand AS (SELECT seq, parent_seq FROM ${t.messages} WHERE search @@ $1::tsquery${own(null)}
    ORDER BY seq DESC LIMIT $3)`;
// The newest matches that pass the role and time filters ($6 roles, $7 since, $8 until; each NULL: none) and,
// with `onPaths`, of the sessions $9 (their numbers) only those on the session's active path (each path walked
// once, depth rows).
export const candidatesFiltered =
  (onPaths: boolean): CandidatesCte =>
  (t, own) =>
    `${onPaths ? `${activePathsCte(t.messages, t.heads, "$9::bigint[]", own)},` : ""}
  cand AS (SELECT seq, parent_seq FROM ${t.messages} WHERE search @@ $1::tsquery${own(null)}
    AND ($6::text[] IS NULL OR role = ANY($6::text[]))
    AND ($7::timestamptz IS NULL OR created_at >= $7::timestamptz)
    AND ($8::timestamptz IS NULL OR created_at < $8::timestamptz)
    ${onPaths ? "AND (session_num <> ALL($9::bigint[]) OR seq IN (SELECT seq FROM path))" : ""}
    ORDER BY seq DESC LIMIT $3)`;
// The same columns for given seqs ($1 bigint[]; $3 unused): the vector channel's nearest messages.
export const CANDIDATES_BY_SEQ: CandidatesCte = (t, own) =>
  `cand AS (SELECT m.seq, m.parent_seq FROM unnest($1::bigint[]) s(seq) JOIN ${t.messages} m ON m.seq = s.seq
    WHERE $3::integer >= 0${own("m")})`;

export interface CandidateRow extends CandidateColumns {
  terms: number[];
  documents: number;
  parent_seq: number | null;
  tokens: number;
  /** Whether the session has compaction overlays: read with one session's candidates on Citus, else absent. */
  overlaid?: boolean;
}

/** The tsquery of any term (scoped) and each term's own. */
export type TermTsqueries = [any: string, each: string[]];

/**
 * The newest RECALL_CANDIDATES matches of any term ($1 the scoped tsquery, $2 each term's). The filters pick among
 * the ranked candidates, after the turns they leave out have lent their weight to their neighbours; but where the
 * newest matches fill the window, the ones a role or time filter asks for may all be older, so the filter's own
 * newest matches are read as well.
 */
export async function candidateRows(
  executor: Executor,
  t: Tables,
  plan: SearchPlan,
  tsqueries: TermTsqueries,
): Promise<CandidateRow[]> {
  const [tsquery, queries] = tsqueries;
  const params = [tsquery, queries, RECALL_CANDIDATES, plan.sessionId ?? null, hasTimeFilter(plan)];
  // Prepared only for one session on Citus: Citus plans it afresh with the values on every execution there (it keeps
  // PostgreSQL off a generic plan for a router query whose session is a parameter), so naming it saves the
  // coordinator's parse of this long statement; on one server its best plan depends on the query.
  const routed = t.layout.readsPerShard && plan.sessionId !== undefined;
  const rows = await executor.query<CandidateRow>(candidatesSql(t), params, routed);
  if (rows.length >= RECALL_CANDIDATES && hasFilters(plan))
    await moreRows(executor, t, plan, tsqueries, rows);
  return rows;
}

/**
 * Adds to `rows` the newest matches that pass the plan's filters and, with `activePaths`, of those sessions only
 * the ones on their active path.
 */
export async function moreRows(
  executor: Executor,
  t: Tables,
  plan: SearchPlan,
  [tsquery, queries]: TermTsqueries,
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

/** The candidate rows of the vector channel's nearest messages `seqs` (matching no term). */
export async function nearRows(
  executor: Executor,
  t: Tables,
  plan: SearchPlan,
  seqs: readonly number[],
): Promise<CandidateRow[]> {
  const read = (some: readonly number[], sessionId: string | null) =>
    executor.query<CandidateRow>(candidatesSql(t, CANDIDATES_BY_SEQ), [
      some,
      [],
      0,
      sessionId,
      hasTimeFilter(plan),
    ]);
  if (!t.layout.readsPerShard || plan.sessionId !== undefined) return read(seqs, plan.sessionId ?? null);
  // In the Citus layout the statement names one session: the seqs' sessions are read first (one fanned-out read),
  // then each session's rows by a statement routed to its shard (at most one per nearest message).
  const found = await executor.query<{ seq: number; session_id: string }>(
    `SELECT seq::float8 AS seq, session_id FROM ${t.messages} WHERE seq = ANY($1::bigint[])`,
    [seqs],
  );
  const bySession = new Map<string, number[]>();
  for (const { seq, session_id } of found)
    bySession.set(session_id, [...(bySession.get(session_id) ?? []), Number(seq)]);
  const rows: CandidateRow[] = [];
  for (const [sessionId, some] of bySession) rows.push(...(await read(some, sessionId)));
  return rows;
}

export const hasTimeFilter = (plan: SearchPlan) => plan.since !== undefined || plan.until !== undefined;

/** A candidate with what the ranking weighs it by. */
export type Node = Candidate & { tokens: number; parent: number | null };

/** The node of a candidate row: the candidate, its parent and its length in tokens. */
export function nodeOf(row: CandidateRow): Node {
  return {
    ...candidateOf(row),
    parent: row.parent_seq === null ? null : Number(row.parent_seq),
    tokens: Number(row.tokens),
    ...(row.overlaid === undefined ? {} : { overlaid: row.overlaid }),
  };
}
