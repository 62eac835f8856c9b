/**
 * Searches across sessions in the Citus layout (docs/POSTGRES.md, "Past one server"). Citus runs a recursive walk
 * only on one shard, so the single-node statements, which climb paths for every candidate, cannot run across
 * sessions. Instead the newest matches are found by one statement without recursion that every shard runs with its
 * own LIMIT (the coordinator merges the shards' newest), and what ranking needs of them (parents past messages
 * without text, the session's head) is read by the candidate statement scoped to the matches' sessions, one
 * statement per shard that holds them (citus/shards.ts), each routed to its worker. The ranking and the page are
 * then the single node's.
 */

import { growingWindow, keepWindowToActivePaths } from "../../search/active-paths.js";
import type { SearchPlan } from "../../search/options.js";
import type { Executor } from "../../sql/engines/postgres/client.js";
import type { Tables } from "../../sql/engines/postgres/tables.js";
import { activePathsCte } from "../../sql/engines/postgres/tree.js";
import { type FilterParams, filterParams } from "../../sql/search/postgres-filters.js";
import { onPathOf, type PageHit, readPage } from "../../sql/search/postgres-page.js";
import { SEARCH_CANDIDATES } from "../../store/limits.js";
import { citusSteps } from "../citus-steps.js";
import {
  CANDIDATES_BY_SEQ,
  type CandidateRow,
  candidatesFiltered,
  candidatesSql,
  hasTimeFilter,
  type Node,
  nodeOf,
  RECALL_CANDIDATES,
  type TermTsqueries,
} from "./candidate-rows.js";

// $1 tsquery, $2 how many, $3 roles, $4 since, $5 until, $6 session numbers left out, $7 session ids (each NULL:
// no filter): the newest matches, each shard its newest $2 (Citus pushes the ORDER BY … LIMIT down to the shards).
const scanSql = (t: Tables, rank: boolean) =>
  `SELECT seq::float8 AS seq, session_id${rank ? ", ts_rank(search, $1::tsquery)::float8 AS rank" : ""}
   FROM ${t.messages} WHERE search @@ $1::tsquery
     AND ($3::text[] IS NULL OR role = ANY($3::text[]))
     AND ($4::timestamptz IS NULL OR created_at >= $4::timestamptz)
     AND ($5::timestamptz IS NULL OR created_at < $5::timestamptz)
     AND ($6::bigint[] IS NULL OR session_num <> ALL($6::bigint[]))
     AND ($7::text[] IS NULL OR session_id = ANY($7::text[]))
   ORDER BY seq DESC LIMIT $2`;

interface Match {
  seq: number;
  session_id: string;
  rank?: number;
}

const NO_FILTERS: FilterParams = { roles: null, sessionIds: null, since: null, until: null };

/** The newest `limit` matches of `tsquery` that pass `filters`, outside the sessions numbered `outside`. */
async function scan(
  executor: Executor,
  t: Tables,
  tsquery: string,
  limit: number,
  filters: FilterParams,
  outside: readonly number[] | null,
  rank: boolean,
): Promise<Match[]> {
  const { roles, since, until, sessionIds } = filters;
  const params = [tsquery, limit, roles, since, until, outside, sessionIds];
  return executor.query<Match>(scanSql(t, rank), params);
}

/**
 * The candidate rows of `matches` (the vector channel's statement: no term needs to match): one statement per
 * shard that holds their sessions, each routed to its worker, so the round trips are bounded by the shard count
 * whatever the number of sessions.
 */
async function rowsOf(
  executor: Executor,
  t: Tables,
  plan: SearchPlan,
  queries: string[],
  matches: readonly Match[],
): Promise<CandidateRow[]> {
  const seqs = new Map<string, number[]>();
  for (const { seq, session_id } of matches) seqs.set(session_id, [...(seqs.get(session_id) ?? []), seq]);
  const shard = (sessions: string[]) => {
    const params = [sessions.flatMap((id) => seqs.get(id) ?? []), queries, 0, sessions, hasTimeFilter(plan)];
    return executor.query<CandidateRow>(candidatesSql(t, CANDIDATES_BY_SEQ, true), params);
  };
  // On a pool the shards' statements run at once, each on a connection of its own (the pool bounds how many).
  const groups = await citusSteps(t).byShard(executor, t, [...seqs.keys()]);
  if (executor.kind === "pool") return (await Promise.all(groups.map(shard))).flat();
  const rows: CandidateRow[] = [];
  for (const sessions of groups) rows.push(...(await shard(sessions)));
  return rows;
}

/**
 * Ranked recall's candidate rows across sessions (candidate-rows.ts `candidateRows` and `moreRows` on one node):
 * the newest RECALL_CANDIDATES matches (passing the filters when `filtered`; the sessions numbered `paths`, known
 * from `known`, kept to their active paths by a statement of their own each), their documents the store's.
 */
export async function fanOutCandidateRows(
  executor: Executor,
  t: Tables,
  plan: SearchPlan,
  [tsquery, queries]: TermTsqueries,
  filtered: boolean,
  paths?: readonly number[],
  known: readonly CandidateRow[] = [],
): Promise<CandidateRow[]> {
  const filters = filtered ? filterParams(plan) : NO_FILTERS;
  if (filters === null) return [];
  // The session ids are in the tsquery already (its scope lexemes); the filter here would only repeat them.
  const scanFilters = { ...filters, sessionIds: null };
  const matches = await scan(executor, t, tsquery, RECALL_CANDIDATES, scanFilters, paths ?? null, false);
  const rows = await rowsOf(executor, t, plan, queries, matches);
  const ids = new Map(known.map((row) => [Number(row.session_num), row.session_id]));
  for (const num of paths ?? []) {
    const sessionId = ids.get(num);
    if (sessionId === undefined) continue;
    const { roles, since, until } = filters;
    const params = [
      tsquery,
      queries,
      RECALL_CANDIDATES,
      sessionId,
      hasTimeFilter(plan),
      roles,
      since,
      until,
      [num],
    ];
    rows.push(...(await executor.query<CandidateRow>(candidatesSql(t, candidatesFiltered(true)), params)));
  }
  rows.sort((a, b) => Number(b.seq) - Number(a.seq));
  const newest = rows.slice(0, RECALL_CANDIDATES);
  const documents = await storeDocuments(executor, t);
  for (const row of newest) row.documents = documents;
  return newest;
}

/**
 * How many messages the store has held, as one node counts them (the newest seq): the messages' sequence on the
 * coordinator, read without a scan of every shard.
 */
async function storeDocuments(executor: Executor, t: Tables): Promise<number> {
  const [row] = await executor.query<{ n: number }>(
    `SELECT (CASE WHEN is_called THEN last_value ELSE 0 END)::float8 AS n FROM ${t.messagesSeq}`,
  );
  return Number(row?.n ?? 0);
}

// $1 tsquery, $2 session number (in an array), $3 its id, $4 roles, $5 since, $6 until, $7 how many: the newest
// matches on the session's active path, ranked, by one statement routed to its shard.
const pathScanSql = (t: Tables) => {
  const own = t.layout.scope("$3::text");
  return `WITH RECURSIVE ${activePathsCte(t.messages, t.heads, "$2::bigint[]", own)}
   SELECT seq::float8 AS seq, session_id, ts_rank(search, $1::tsquery)::float8 AS rank
   FROM ${t.messages} WHERE search @@ $1::tsquery AND session_num = ANY($2::bigint[])${own(null)}
     AND seq IN (SELECT seq FROM path)
     AND ($4::text[] IS NULL OR role = ANY($4::text[]))
     AND ($5::timestamptz IS NULL OR created_at >= $5::timestamptz)
     AND ($6::timestamptz IS NULL OR created_at < $6::timestamptz)
   ORDER BY seq DESC LIMIT $7`;
};

/**
 * The newest matches across sessions, those of the sessions `paths` keeps to (numbers to ids) only on their active
 * paths (each by a statement of its own), best rank first; `full` when the scan left older matches out.
 */
async function rankedMatches(
  executor: Executor,
  t: Tables,
  tsquery: string,
  filters: FilterParams,
  paths: ReadonlyMap<number, string>,
): Promise<{ matches: Match[]; full: boolean }> {
  const outside = paths.size === 0 ? null : [...paths.keys()];
  const matches = await scan(executor, t, tsquery, SEARCH_CANDIDATES, filters, outside, true);
  const full = matches.length >= SEARCH_CANDIDATES;
  const { roles, since, until } = filters;
  for (const [num, sessionId] of paths) {
    const params = [tsquery, [num], sessionId, roles, since, until, SEARCH_CANDIDATES];
    matches.push(...(await executor.query<Match>(pathScanSql(t), params)));
  }
  matches.sort((a, b) => (b.rank ?? 0) - (a.rank ?? 0) || b.seq - a.seq);
  return { matches, full };
}

/**
 * Every word required, across sessions (search.ts `allWords` on one node): the newest SEARCH_CANDIDATES matches
 * ranked by `ts_rank`, read by session from the best down in a growing window (growingWindow), then the page. As on
 * one node, when the matches are mostly off the active paths and older ones were left out, the sessions that crowded
 * them are kept to their paths and the matches read again (keepWindowToActivePaths). Here the window grows first: a
 * growth reads only the rows of matches already found, where one node scans the matches again.
 */
export async function fanOutAllWords(
  executor: Executor,
  t: Tables,
  tsquery: string,
  plan: SearchPlan,
  filters: FilterParams,
): Promise<PageHit[]> {
  const { limit, activeOnly } = plan;
  const nodes = new Map<number, Node>();
  // Session numbers to ids, of the matches read: a session kept to its path is read by its id.
  const ids = new Map<number, string>();
  const read = async (kept: readonly number[]) => {
    const paths = new Map(kept.flatMap((num) => (ids.has(num) ? [[num, ids.get(num)!] as const] : [])));
    const { matches, full } = await rankedMatches(executor, t, tsquery, filters, paths);
    const scores = new Map(matches.map((m) => [m.seq, m.rank ?? 0]));
    const last = await growingWindow(plan, matches.length, async (window) => {
      const top = matches.slice(0, window);
      const unread = top.filter((m) => !nodes.has(m.seq));
      for (const row of await rowsOf(executor, t, plan, [], unread)) {
        const node = nodeOf(row);
        nodes.set(node.seq, node);
        ids.set(node.sessionNum, node.sessionId);
      }
      let hits = top.flatMap((m) => nodes.get(m.seq) ?? []);
      let off: Node[] = [];
      if (activeOnly) {
        const onPath = await onPathOf(executor, t, hits);
        off = hits.filter((node) => onPath.get(node.seq) !== true);
        hits = hits.filter((node) => onPath.get(node.seq) === true);
      }
      return { hits, off, found: hits.length, held: top.length, full };
    });
    return { ...last, scores };
  };
  const { hits, scores } = await keepWindowToActivePaths(plan, await read([]), {
    crowding: (answer) => answer.off.map((node) => ({ num: node.sessionNum, depth: node.leafDepth })),
    reread: read,
  });
  return readPage(executor, t, hits.slice(0, limit), scores);
}
