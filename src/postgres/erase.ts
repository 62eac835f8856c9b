/**
 * A session's erasure on Postgres: counts what goes, then deletes it, inside the caller's transaction (one per
 * session, which holds the session's head and registry row: a reader sees the whole session or none of it, and a
 * crash rolls the session back whole).
 */

import { countsOf, type ErasureCondition, type ErasureCounts, meetsCondition } from "../store/erasure.js";
import type { RegistryErasure } from "../store/registry-base.js";
import { cursorOf } from "../store/written.js";
import { sessionParam, sessionScope } from "./citus/route.js";
import type { Executor, Query } from "./connection/client.js";
import { deleteKeyed } from "./context-records.js";
import { logNames } from "./feed/append-log.js";
import type { PostgresChangeLog } from "./feed/change-log.js";
import { releaseSession } from "./media/attachments.js";
import type { Tables } from "./schema.js";
import { vectorTables } from "./search/vectors-schema.js";
import { forgetStreamSql } from "./streams.js";
import { isoSql } from "./tree.js";

// The payloads linked by the session's messages that no message of another session links: what its release frees.
const freedSql = (t: Tables) => `SELECT count(DISTINCT l.hash) AS n FROM ${t.attachmentLinks} l
  JOIN ${t.messages} m ON m.seq = l.message_seq WHERE m.session_num = $1::bigint
    AND NOT EXISTS (SELECT 1 FROM ${t.attachmentLinks} o JOIN ${t.messages} om ON om.seq = o.message_seq
      WHERE o.hash = l.hash AND om.session_num <> $1::bigint)`;

// The Citus layout shards links by session, so the session's payloads are one shard's read and those another
// session also links are one statement every shard runs (a correlated subquery across shards is refused there).
const sessionHashesSql = (t: Tables) =>
  `SELECT DISTINCT hash FROM ${t.attachmentLinks} WHERE session_id = $1::text`;
const sharedHashesSql = (t: Tables) =>
  `SELECT DISTINCT hash FROM ${t.attachmentLinks} WHERE hash = ANY($1::text[]) AND session_id <> $2::text`;

/** How many payloads the release of session `id` (number `num`) frees. */
async function freedCount(query: Query, t: Tables, id: string, num: string | number): Promise<number> {
  if (!t.distributed) return count(query, freedSql(t), [num]);
  const hashes = (await query<{ hash: string }>(sessionHashesSql(t), [id])).map((r) => r.hash);
  if (hashes.length === 0) return 0;
  const shared = await query<{ hash: string }>(sharedHashesSql(t), [hashes, id]);
  return hashes.length - shared.length;
}

// Messages (their search vectors, vector rows and index entries go with them), overlays and the head; in the
// Citus layout each names the session ($2), so each runs on its one shard.
const contentSql = (t: Tables) => {
  const own = sessionScope(t, "$2::text");
  return `WITH m AS (DELETE FROM ${t.messages} WHERE session_num = $1::bigint${own(null)} RETURNING 1),
    c AS (DELETE FROM ${t.compactions} WHERE session_num = $1::bigint${own(null)} RETURNING 1),
    h AS (DELETE FROM ${t.heads} WHERE num = $1::bigint${own(null)})
    SELECT (SELECT count(*) FROM m) AS messages, (SELECT count(*) FROM c) AS compactions`;
};

/** @internal a session's change-log rows, counted as they go: one range of the log's session index. */
export const eraseChangesSql = (t: Tables) =>
  `WITH d AS (DELETE FROM ${logNames(t).table} WHERE session_id = $1 RETURNING 1) SELECT count(*) AS n FROM d`;

async function present(query: Query, table: string): Promise<boolean> {
  const [row] = await query<{ found: boolean }>("SELECT to_regclass($1) IS NOT NULL AS found", [table]);
  return row?.found === true;
}

async function count(query: Query, sql: string, params: unknown[]): Promise<number> {
  const [row] = await query<{ n: string | number }>(sql, params);
  return Number(row?.n ?? 0);
}

/**
 * Erases session `id` (head number `num`, when it has stored data): messages, overlays, vectors, head, freed
 * payloads, every block and entry recorded for it, the unrecorded blocks of `keys` and the entries filed under
 * them, its change-log rows and its registry row.
 * Answers the counts; the caller logs `erased` after it, in the same transaction.
 */
export async function eraseSession(
  query: Query,
  t: Tables,
  id: string,
  num: string | number | undefined,
  keys: readonly string[],
): Promise<ErasureCounts> {
  const counts = countsOf(undefined);
  if (num !== undefined) {
    const vectors = vectorTables(t).vectors;
    if (await present(query, vectors)) {
      counts.vectors = await count(
        query,
        `SELECT count(*) AS n FROM ${vectors} WHERE session_num = $1::bigint`,
        [num],
      );
    }
    counts.attachments = await freedCount(query, t, id, num);
    await releaseSession(query, t, { num, id });
    const [content] = await query<{ messages: string; compactions: string }>(contentSql(t), [
      num,
      ...sessionParam(t, id),
    ]);
    counts.messages = Number(content?.messages ?? 0);
    counts.compactions = Number(content?.compactions ?? 0);
  }
  const context = await deleteKeyed(query, t, id, keys);
  counts.blocks = context.blocks;
  counts.entries = context.entries;
  const log = logNames(t).table;
  if (await present(query, log)) counts.changes = await count(query, eraseChangesSql(t), [id]);
  await query(forgetStreamSql(t), [id]); // a running answer's chunks go with the session
  counts.sessions = await count(
    query,
    `WITH d AS (DELETE FROM ${t.sessions} WHERE id = $1 RETURNING 1) SELECT count(*) AS n FROM d`,
    [id],
  );
  return counts;
}

const HEAD = (t: Tables, lock: string) => `SELECT num FROM ${t.heads} WHERE session_id = $1${lock}`;
const ROW = (t: Tables, lock: string) =>
  `SELECT ${isoSql("updated_at")} AS updated_at, pinned, owner, source FROM ${t.sessions} WHERE id = $1${lock}`;

/**
 * The registry's erase on Postgres: one transaction that locks the session's head, then its registry row (the
 * order appends and deletes take them), checks `condition`, erases and logs `erased`. With `skipLocked` a head or
 * row another transaction holds is skipped (`FOR UPDATE SKIP LOCKED`): a concurrent sweeper is erasing it, or a
 * writer is writing to it, and it is not inactive then. Null: nothing there, condition unmet, or skipped.
 */
export async function eraseLocked(
  executor: Executor,
  t: Tables,
  log: PostgresChangeLog | undefined,
  id: string,
  keys: readonly string[],
  condition: ErasureCondition,
): Promise<RegistryErasure | null> {
  const lock = condition.skipLocked ? " FOR UPDATE SKIP LOCKED" : " FOR UPDATE";
  return executor.transaction(async (query) => {
    if (condition.skipLocked) {
      const [stored] = await query<{ num: string }>(HEAD(t, ""), [id]);
      const [locked] = await query<{ num: string }>(HEAD(t, lock), [id]);
      if (stored && !locked) return null;
    }
    const [head] = await query<{ num: string }>(HEAD(t, lock), [id]);
    const [row] = await query<{
      updated_at: string;
      pinned: boolean;
      owner: string | null;
      source: string | null;
    }>(ROW(t, lock), [id]);
    const info = row && {
      updated_at: row.updated_at,
      source: row.source,
      ...(row.pinned ? { pinned: true as const } : {}),
      ...(row.owner === null ? {} : { owner: row.owner }),
    };
    if (!meetsCondition(info, condition)) return null;
    if (!head && !row) return null;
    const counts = await eraseSession(query, t, id, head?.num, keys);
    const erased = { sessionId: id, type: "erased" as const, ids: [] };
    return { counts, logged: cursorOf(log ? await log.recordIn(query, erased) : undefined) };
  });
}
