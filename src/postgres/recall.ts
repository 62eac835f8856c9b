/**
 * Ranked recall on Postgres, the twin of src/sqlite/recall.ts: each content term finds its newest matches through
 * the GIN index (at most perTermCap each, the session's scope lexeme ANDed into its tsquery), all terms in one
 * statement that also brings each candidate's parent, length, role, time and session; search/recall.ts weighs and
 * ranks them, and the hits are read a page at a time (search-page.ts).
 */
import type { QueryLimits } from "../search/limits.js";
import { outsideSessions, passesFilters, type SearchPlan } from "../search/options.js";
import { perTermCap, rankCandidates, recallTerms, weighMatches } from "../search/recall.js";
import { SEARCH_CANDIDATES } from "../store/limits.js";
import type { Executor } from "./client.js";
import { sessionLexeme, toTsquery } from "./fts.js";
import type { Tables } from "./schema.js";
import { type Candidate, onPathOf, type PageHit, readPage } from "./search-page.js";
import { isoSql } from "./tree.js";

// $1 term numbers, $2 their tsqueries, $3 matches per term: every term's newest matches with what ranking needs.
function candidatesSql(t: Tables): string {
  return `WITH terms(i, q) AS (SELECT * FROM unnest($1::integer[], $2::tsquery[])),
  matched AS (
    SELECT t.i, c.seq FROM terms t
    CROSS JOIN LATERAL (SELECT seq FROM ${t.messages} WHERE search @@ t.q ORDER BY seq DESC LIMIT $3) c
  )
  SELECT matched.i, m.seq::float8 AS seq, m.parent_seq::float8 AS parent_seq, m.tokens, m.role, m.depth,
    ${isoSql("m.created_at")} AS created_at, h.session_id, h.num::float8 AS session_num,
    h.leaf_seq::float8 AS leaf_seq, h.leaf_depth, h.message_count
  FROM matched JOIN ${t.messages} m ON m.seq = matched.seq JOIN ${t.heads} h ON h.num = m.session_num`;
}

interface CandidateRow {
  i: number;
  seq: number;
  parent_seq: number | null;
  tokens: number;
  role: string;
  depth: number;
  created_at: string;
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
): Promise<PageHit[]> {
  // Parsed (and so bounded) before anything else: a query over the limits is refused even with limit 0.
  const terms = recallTerms(query, limits);
  if (terms.length === 0 || plan.limit === 0 || outsideSessions(plan)) return [];
  const scope = plan.sessionId === undefined ? undefined : sessionLexeme(plan.sessionId);
  const numbers: number[] = [];
  const queries: string[] = [];
  terms.forEach((term, i) => {
    const tsquery = toTsquery([term], scope);
    // A term no document can contain (it folds to nothing) finds nothing; the other terms still search.
    if (tsquery === null) return;
    numbers.push(i);
    queries.push(tsquery);
  });
  if (numbers.length === 0) return [];
  const cap = perTermCap(terms.length, SEARCH_CANDIDATES);
  const rows = await executor.query<CandidateRow>(candidatesSql(t), [numbers, queries, cap]);
  const nodes = new Map<number, Candidate & { tokens: number; parent: number | null }>();
  const matches: number[][] = terms.map(() => []);
  for (const row of rows) {
    // The scope lexeme is a hash: a collision could bring another session's rows, which are dropped here.
    if (plan.sessionId !== undefined && row.session_id !== plan.sessionId) continue;
    if (plan.sessionIds !== undefined && !plan.sessionIds.has(row.session_id)) continue;
    const seq = Number(row.seq);
    matches[row.i]!.push(seq);
    if (nodes.has(seq)) continue;
    nodes.set(seq, {
      seq,
      parent: row.parent_seq === null ? null : Number(row.parent_seq),
      tokens: Number(row.tokens),
      role: row.role,
      createdAt: row.created_at,
      depth: Number(row.depth),
      sessionId: row.session_id,
      sessionNum: Number(row.session_num),
      leafSeq: row.leaf_seq === null ? null : Number(row.leaf_seq),
      branched: Number(row.message_count) !== Number(row.leaf_depth) + 1 || row.leaf_seq === null,
    });
  }
  for (const seqs of matches) seqs.sort((a, b) => b - a);
  const documents = await scopeSize(executor, t, plan.sessionId, nodes);
  const perTerm = weighMatches(matches, (seq) => nodes.get(seq)?.tokens, documents);
  // Off-path candidates of sessions with other branches take no part in an active-branch search at all.
  let visible: ((seq: number) => boolean) | undefined;
  if (plan.activeOnly) {
    const branched = [...nodes.values()].filter((node) => node.branched);
    const onPath = await onPathOf(executor, t, branched);
    visible = (seq) => !nodes.get(seq)?.branched || onPath.get(seq) === true;
  }
  const ranked = rankCandidates(perTerm, (seq) => nodes.get(seq)?.parent, {
    ...(visible ? { visible } : {}),
    returnable: (seq) => {
      const node = nodes.get(seq);
      return node !== undefined && passesFilters(plan, node.role, node.createdAt);
    },
  });
  const top = ranked.slice(0, plan.limit);
  return readPage(
    executor,
    t,
    top.map(({ seq }) => nodes.get(seq)!),
    new Map(top.map(({ seq, score }) => [seq, score])),
  );
}

// How many messages the search looks through, for term rarity: the session's count, or the store's size.
async function scopeSize(
  executor: Executor,
  t: Tables,
  sessionId: string | undefined,
  nodes: ReadonlyMap<number, unknown>,
): Promise<number> {
  const sql =
    sessionId === undefined
      ? `SELECT COALESCE(MAX(seq), 0)::float8 AS n FROM ${t.messages}`
      : `SELECT message_count::float8 AS n FROM ${t.heads} WHERE session_id = $1`;
  const [row] = await executor.query<{ n: number }>(sql, sessionId === undefined ? [] : [sessionId]);
  return Math.max(Number(row?.n ?? 0), nodes.size);
}
