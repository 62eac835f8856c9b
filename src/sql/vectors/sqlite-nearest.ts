/**
 * The vector channel's nearest-neighbour reads on SQLite: sqlite-vec's KNN, and the newest vectors of the scope
 * scored one by one (the plain BLOB table, and sqlite-vec where its KNN cannot reach far enough). The sessions and
 * a search's role and time filters are part of the read: filtering the nearest vectors afterwards found nothing
 * for a role or time range they all miss, or for an owner other owners' messages outnumber. The SQL condition is filterSql's, never stricter than passesFilters,
 * which decides each row read here too (a bound of an extended year, a time stored in another form).
 */
import { hasFilters, passesFilters } from "../../search/options.js";
import { bytesVector, vectorBytes } from "../../search/vectors/embed.js";
import { dot, PLAIN_VECTOR_CANDIDATES, TopK } from "../../search/vectors/score.js";
import type { NearestRead } from "../../search/vectors/types.js";
import type { SqlDriver, SqlValue } from "../engines/sqlite/driver.js";
import { type FilterSql, filterSql } from "../search/sqlite-filters.js";
import { CURRENT } from "./sqlite-schema.js";

/** The most neighbours sqlite-vec answers per query, and per session of a set (it searches each one by itself). */
const MAX_KNN = 4096;

/**
 * Where a nearest read keeps to: the sessions `nums` (undefined: all, or all of `read.owner`'s) and, of those, the
 * ones whose active paths alone count (`paths`, their numbers; see pathsWithin).
 */
export interface NearestSessions {
  nums: readonly number[] | undefined;
  paths: readonly number[];
}

// A message `m` of a session registered with the owner (the parameter): its head by key, the registry row by id. The
// owner's sessions are never listed, however many they are.
const OWNED = `EXISTS (SELECT 1 FROM agent_session_heads oh JOIN agent_sessions os ON os.id = oh.session_id
  WHERE oh.num = m.session_num AND os.owner = ?)`;

// The owner a read keeps to by OWNED: one whose sessions were not listed as `nums` already.
const ownerOf = (read: NearestRead, { nums }: NearestSessions) =>
  nums === undefined ? read.owner : undefined;

/** The vectors `v` of messages `m` a read takes: current, of the sessions, passing the filters and paths. */
function conditions(
  read: NearestRead,
  { nums, paths }: NearestSessions,
): { sql: string; params: SqlValue[] } {
  const parts = [CURRENT];
  const params: SqlValue[] = [];
  if (nums !== undefined) {
    parts.push("v.session_num IN (SELECT value FROM json_each(?))");
    params.push(JSON.stringify(nums));
  }
  const filter = readFilter(read, paths);
  if (filter !== undefined) {
    parts.push(filter.where);
    params.push(...filter.params);
  }
  const owner = ownerOf(read, { nums, paths });
  if (owner !== undefined) {
    parts.push(OWNED);
    params.push(owner);
  }
  return { sql: parts.join(" AND "), params };
}

// The read's role and time filters and the active paths it keeps to, as a condition on the messages `m` (filters.ts).
function readFilter(read: NearestRead, paths: readonly number[]): FilterSql | undefined {
  return filterSql(read, paths.length > 0 ? { activePaths: paths } : {});
}

/**
 * The best `read.limit` of the newest PLAIN_VECTOR_CANDIDATES vectors the read takes, leaving out `skip`: from the
 * BLOB column scored in JavaScript, or from sqlite-vec's table by rowid with its cosine distance.
 */
export function scanNearest(
  driver: SqlDriver,
  query: Float32Array,
  read: NearestRead,
  sessions: NearestSessions,
  source: "blob" | "sqlite-vec",
  top = new TopK(read.limit),
  skip: ReadonlySet<number> = new Set(),
): TopK {
  const where = conditions(read, sessions);
  const newest = (columns: string, extra: string) =>
    `SELECT v.seq, ${columns}, m.role, m.created_at FROM agent_message_vectors v
     JOIN agent_messages m ON m.seq = v.seq WHERE ${extra}${where.sql} ORDER BY v.seq DESC LIMIT ?`;
  if (source === "blob") {
    const rows = driver.tuples<[number, Uint8Array | ArrayBuffer, string, string]>(
      newest("v.vector", "v.vector IS NOT NULL AND "),
      [...where.params, PLAIN_VECTOR_CANDIDATES],
    );
    for (const [seq, bytes, role, createdAt] of rows) {
      if (!skip.has(seq) && passesFilters(read, role, createdAt))
        top.add(seq, dot(query, bytesVector(bytes)));
    }
    return top;
  }
  // A message without text has no row in sqlite-vec's table: its score is NULL and it is left out (it still counts
  // among the newest read).
  const rows = driver.tuples<[number, number | null, string, string]>(
    `SELECT c.seq, 1 - vec_distance_cosine((SELECT embedding FROM agent_message_vectors_vec WHERE rowid = c.seq), ?),
       c.role, c.created_at FROM (${newest("NULL", "")}) c`,
    [vectorBytes(query), ...where.params, PLAIN_VECTOR_CANDIDATES],
  );
  for (const [seq, score, role, createdAt] of rows) {
    if (score !== null && !skip.has(seq) && passesFilters(read, role, createdAt)) top.add(seq, score);
  }
  return top;
}

/**
 * sqlite-vec's nearest current vectors that the read takes. Its KNN has no role or time column to filter on: with a
 * filter it reads more neighbours (up to MAX_KNN, per session of a set) and keeps those that pass, which is exact
 * while at least `limit` pass or the KNN saw every vector. Otherwise the newest PLAIN_VECTOR_CANDIDATES passing
 * vectors are scored as well (as the plain table does), so a rare role or an old time range is still found; a
 * passing vector outside both the nearest MAX_KNN and the newest PLAIN_VECTOR_CANDIDATES is not: the bound here.
 */
export function knnNearest(
  driver: SqlDriver,
  query: Float32Array,
  read: NearestRead,
  sessions: NearestSessions,
): number[] {
  const { nums, paths } = sessions;
  const bytes = vectorBytes(query);
  const partitions = nums === undefined ? "" : " AND session_num IN (SELECT value FROM json_each(?))";
  const scope = nums === undefined ? [] : [JSON.stringify(nums)];
  const knn = `WITH knn AS MATERIALIZED (SELECT rowid AS seq, distance, session_num FROM agent_message_vectors_vec
    WHERE embedding MATCH ? AND k = ?${partitions})`;
  const owner = ownerOf(read, sessions);
  if (!hasFilters(read) && paths.length === 0 && owner === undefined) {
    // A few more than asked make up for stale rows left out.
    return driver.column<number>(
      `${knn} SELECT knn.seq FROM knn JOIN agent_message_vectors v ON v.seq = knn.seq
       JOIN agent_messages m ON m.seq = v.seq WHERE ${CURRENT} ORDER BY knn.distance, knn.seq DESC LIMIT ?`,
      [bytes, Math.min(MAX_KNN, read.limit + 16), ...scope, read.limit],
    );
  }
  // Every neighbour comes back (to count them per session); one the read does not take has no role. An owner is a
  // filter as a role is: the KNN has no column for it.
  const filter = readFilter(read, paths);
  const sql = `${knn} SELECT knn.seq, knn.session_num, knn.distance, m.role, m.created_at FROM knn
    LEFT JOIN agent_message_vectors v ON v.seq = knn.seq
    LEFT JOIN agent_messages m ON m.seq = v.seq AND ${CURRENT}${filter ? ` AND ${filter.where}` : ""}${
      owner === undefined ? "" : ` AND ${OWNED}`
    }
    ORDER BY knn.distance, knn.seq DESC`;
  // A filter most messages pass (a role of a conversation's two) needs few neighbours: eight times what is asked
  // first, and MAX_KNN only when too few of those pass.
  for (let k = Math.min(MAX_KNN, 8 * (read.limit + 16)); ; k = MAX_KNN) {
    const rows = driver.tuples<[number, number, number, string | null, string | null]>(sql, [
      bytes,
      k,
      ...scope,
      ...(filter?.params ?? []),
      ...(owner === undefined ? [] : [owner]),
    ]);
    const top = new TopK(read.limit);
    const found = new Set<number>();
    const perSession = new Map<number, number>();
    for (const [seq, session, distance, role, createdAt] of rows) {
      perSession.set(session, (perSession.get(session) ?? 0) + 1);
      if (role === null || !passesFilters(read, role, createdAt ?? undefined)) continue;
      top.add(seq, 1 - distance);
      found.add(seq);
    }
    // The passing neighbours are the nearest passing vectors while the KNN saw every vector or `limit` passed. A
    // set's KNN runs per session (k each); the store's once (k in all), so there no session's count tells.
    const sawAll =
      nums === undefined ? rows.length < k : [...perSession.values()].every((count) => count < k);
    if (found.size >= read.limit || sawAll) return top.seqs();
    if (k === MAX_KNN) return scanNearest(driver, query, read, sessions, "sqlite-vec", top, found).seqs();
  }
}
