/**
 * The sessions, the role and time filters and the sessions' active paths of the vector channel's nearest read on
 * Postgres, as conditions on the vectors `v` and messages `m` (and an owner's, on the registry): inside the read, so a nearest read with a filter
 * scores the vectors that pass it (filtering the nearest vectors afterwards found nothing for a role or time range
 * they all miss). The parameters are filterParams' (filters.ts): exact, never stricter than passesFilters, and none
 * a row cannot hold.
 */
import { canBeStored } from "../../message/ids.js";
import { type BranchedSession, pathsWithin } from "../../search/active-paths.js";
import type { NearestRead } from "../../search/vectors/types.js";
import type { Executor } from "../engines/postgres/client.js";
import type { Tables } from "../engines/postgres/tables.js";
import { activePathsCte } from "../engines/postgres/tree.js";
import { filterParams } from "../search/postgres-filters.js";
import { onPathOf } from "../search/postgres-page.js";

/** Conditions (each starting with AND) and their parameters, numbered from `$first`. */
export interface NearestWhere {
  sql: string;
  params: unknown[];
}

/**
 * The sessions (numbers) whose active paths alone count in an active read: of the scope's sessions, those with other
 * branches (a linear one is read whole), shallowest first within ACTIVE_PATH_ROWS (pathsWithin).
 */
export async function nearestPaths(executor: Executor, t: Tables, read: NearestRead): Promise<number[]> {
  if (!read.activePath) return [];
  const ids = (read.sessionIds ?? (read.sessionId === undefined ? [] : [read.sessionId])).filter(canBeStored);
  if (ids.length === 0) return [];
  const rows = await executor.query<BranchedSession>(
    `SELECT num::float8 AS num, leaf_depth AS depth FROM ${t.heads}
     WHERE session_id = ANY($1::text[]) AND (leaf_seq IS NULL OR message_count <> leaf_depth + 1)`,
    [ids],
    true,
  );
  return pathsWithin(rows.map(({ num, depth }) => ({ num: Number(num), depth: Number(depth) })));
}

/**
 * The sessions with a message among `seqs` off their active path, with their leaf's depth (nearestOnActivePaths):
 * only such a message can crowd out one on a path. The check is onPathOf's (page.ts: a climb of O(log depth) rows
 * per message, a path read whole only where that costs less).
 */
export async function offPathOf(
  executor: Executor,
  t: Tables,
  seqs: readonly number[],
): Promise<BranchedSession[]> {
  const rows = await executor.query<{
    seq: number;
    depth: number;
    num: number;
    leaf_seq: number | null;
    leaf_depth: number;
    session_id: string;
  }>(
    `SELECT m.seq::float8 AS seq, m.depth, h.num::float8 AS num, h.leaf_seq::float8 AS leaf_seq, h.leaf_depth,
       h.session_id
     ${
       t.layout.readsPerShard
         ? // A co-located join (on the session), the seqs a condition: Citus fans it out to every shard once.
           `FROM ${t.messages} m JOIN ${t.heads} h ON h.session_id = m.session_id AND h.num = m.session_num
     WHERE m.seq = ANY($1::bigint[]) AND (h.leaf_seq IS NULL OR h.message_count <> h.leaf_depth + 1)`
         : `FROM unnest($1::bigint[]) s(seq) JOIN ${t.messages} m ON m.seq = s.seq JOIN ${t.heads} h ON h.num = m.session_num
     WHERE h.leaf_seq IS NULL OR h.message_count <> h.leaf_depth + 1`
     }`,
    [seqs],
    true,
  );
  const messages = rows.map((row) => ({
    seq: Number(row.seq),
    depth: Number(row.depth),
    num: Number(row.num),
    leafSeq: row.leaf_seq === null ? null : Number(row.leaf_seq),
    leafDepth: Number(row.leaf_depth),
    branched: true,
    sessionId: row.session_id,
  }));
  const onPath = await onPathOf(executor, t, messages);
  const off = new Map<number, BranchedSession>();
  for (const m of messages)
    if (onPath.get(m.seq) !== true) off.set(m.num, { num: m.num, depth: m.leafDepth });
  return [...off.values()];
}

/**
 * The read's conditions, with the active paths of `paths` (nearestPaths); null when no stored message can pass them.
 * In the Citus layout `onPath` holds those paths' seqs (vectors-citus.ts `activePathSeqs`), walked beforehand.
 */
export function nearestWhere(
  t: Tables,
  read: NearestRead,
  first: number,
  paths: readonly number[],
  onPath: readonly number[] = [],
): NearestWhere | null {
  const ids = read.sessionIds ?? (read.sessionId === undefined ? undefined : [read.sessionId]);
  const filters = filterParams({
    roles: read.roles,
    since: read.since,
    until: read.until,
    sessionIds: ids === undefined ? undefined : new Set(ids),
  });
  if (filters === null) return null;
  let sql = "";
  const params: unknown[] = [];
  const add = (condition: (param: string) => string, value: unknown) => {
    params.push(value);
    sql += ` AND ${condition(`$${first + params.length - 1}`)}`;
  };
  if (filters.sessionIds !== null && t.layout.rowsCarrySession) {
    // Both tables named: with the vectors' alone Citus ran the read's inner part on the shard but planned the whole
    // as a subplan through the coordinator (test/citus.test.ts reads the plan).
    add((p) => `v.session_id = ANY(${p}::text[]) AND m.session_id = ANY(${p}::text[])`, filters.sessionIds);
  } else if (filters.sessionIds !== null) {
    add(
      (p) => `v.session_num IN (SELECT num FROM ${t.heads} WHERE session_id = ANY(${p}::text[]))`,
      filters.sessionIds,
    );
  }
  // The owner's sessions by the registry's owner column, per vector read: never a list of them, however many.
  if (read.owner !== undefined && t.layout.rowsCarrySession) {
    // The registry is co-located by session id: a join on it stays on each shard.
    add(
      (p) => `EXISTS (SELECT 1 FROM ${t.sessions} os WHERE os.id = v.session_id AND os.owner = ${p}::text)`,
      read.owner,
    );
  } else if (read.owner !== undefined) {
    add(
      (p) => `EXISTS (SELECT 1 FROM ${t.heads} oh JOIN ${t.sessions} os ON os.id = oh.session_id
        WHERE oh.num = v.session_num AND os.owner = ${p}::text)`,
      read.owner,
    );
  }
  if (filters.roles !== null) add((p) => `m.role = ANY(${p}::text[])`, filters.roles);
  if (filters.since !== null) add((p) => `m.created_at >= ${p}::timestamptz`, filters.since);
  if (filters.until !== null) add((p) => `m.created_at < ${p}::timestamptz`, filters.until);
  // The active paths, each walked once from its head's leaf; the other sessions' messages all count.
  if (paths.length > 0 && t.layout.readsPerShard) {
    const seqs = `$${first + params.length + 1}`;
    add((p) => `(v.session_num <> ALL(${p}::bigint[]) OR m.seq = ANY(${seqs}::bigint[]))`, paths);
    params.push(onPath);
  } else if (paths.length > 0) {
    add(
      (p) =>
        `(v.session_num <> ALL(${p}::bigint[]) OR m.seq IN (WITH RECURSIVE ${activePathsCte(t.messages, t.heads, `${p}::bigint[]`)} SELECT seq FROM path))`,
      paths,
    );
  }
  return { sql, params };
}
