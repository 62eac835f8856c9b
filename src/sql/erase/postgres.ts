/**
 * Postgres' statements of a session's erasure (steps.ts has the steps). Postgres locks the session's head
 * and registry row (`FOR UPDATE`, a sweep `SKIP LOCKED`); a DELETE counts what it took in the same statement (a
 * CTE); in the Citus layout each delete names the session so it runs on its one shard, and the freed payloads are
 * two reads (links are sharded by session, payloads by hash: a correlated subquery across shards is refused).
 */

import type { Query } from "../engines/postgres/client.js";
import { call } from "../engines/postgres/program.js";
import { statement, type Tables } from "../engines/postgres/tables.js";
import { isoSql } from "../engines/postgres/tree.js";
import { type FactStatements, forgetSessionFacts } from "../facts/steps.js";
import { command, countOf, query } from "../program.js";
import { forgetRoomRows } from "../rooms/postgres.js";
import type { EraseLock, EraseStatements } from "./steps.js";

const LOCKS: Record<EraseLock, string> = { none: "", update: " FOR UPDATE", skip: " FOR UPDATE SKIP LOCKED" };

// The payloads linked by the session's messages that no message of another session links: what its release frees.
const freedSql = statement(
  (t) => `SELECT count(DISTINCT l.hash) AS n FROM ${t.attachmentLinks} l
  JOIN ${t.messages} m ON m.seq = l.message_seq WHERE m.session_num = $1::bigint
    AND NOT EXISTS (SELECT 1 FROM ${t.attachmentLinks} o JOIN ${t.messages} om ON om.seq = o.message_seq
      WHERE o.hash = l.hash AND om.session_num <> $1::bigint)`,
);
const sessionHashesSql = statement(
  (t) => `SELECT DISTINCT hash FROM ${t.attachmentLinks} WHERE session_id = $1::text`,
);
const sharedHashesSql = statement(
  (t) =>
    `SELECT DISTINCT hash FROM ${t.attachmentLinks} WHERE hash = ANY($1::text[]) AND session_id <> $2::text`,
);

// Messages (their search vectors, vector rows and index entries go with them), overlays and the head; in the
// Citus layout each names the session ($2), so each runs on its one shard.
const contentSql = statement((t) => {
  const own = t.layout.scope("$2::text");
  return `WITH m AS (DELETE FROM ${t.messages} WHERE session_num = $1::bigint${own(null)} RETURNING 1),
    c AS (DELETE FROM ${t.compactions} WHERE session_num = $1::bigint${own(null)} RETURNING 1),
    h AS (DELETE FROM ${t.heads} WHERE num = $1::bigint${own(null)})
    SELECT (SELECT count(*) FROM m) AS messages, (SELECT count(*) FROM c) AS compactions`;
});

/** @internal a session's rows in the change log `changes`, counted as they go: one range of its session index. */
export const eraseChangesSql = (changes: string) =>
  `WITH d AS (DELETE FROM ${changes} WHERE session_id = $1 RETURNING 1) SELECT count(*) AS n FROM d`;

const sessionSql = statement(
  (t) => `WITH d AS (DELETE FROM ${t.sessions} WHERE id = $1 RETURNING 1) SELECT count(*) AS n FROM d`,
);

/**
 * What the erasure runs of the engine's other modules, for the tables `t`: the tables they name, and the helpers a
 * session's delete, a payload release and a stream drop run too. postgres/erase.ts hands them in.
 */
export interface PostgresEraseHelpers {
  /** The message vectors' table (search/vectors-schema.ts) and the change log's (feed/append-log.ts). */
  vectors: string;
  changes: string;
  /** Releases the session's payload links and the payloads nobody else links (sql/media/postgres.ts). */
  release(query: Query, session: { num: unknown; id: string }): Promise<void>;
  /** Deletes the blocks and entries recorded for the session and the unrecorded ones of `keys` (sql/context-records/postgres.ts). */
  deleteKeyed(
    query: Query,
    id: string,
    keys: readonly string[],
  ): Promise<{ blocks: number; entries: number }>;
  /** The facts' statements (sql/facts/postgres.ts). */
  facts: FactStatements;
  /** The statement deleting a session's stream head and chunks (sql/streams/postgres.ts). */
  forgetStream: string;
}

/** The erasure's statements on Postgres for the tables `t`, running `h`'s helpers. */
export function postgresErase(t: Tables, h: PostgresEraseHelpers): EraseStatements {
  return {
    locks: true,
    head: (id, lock) => query(`SELECT num FROM ${t.heads} WHERE session_id = $1${LOCKS[lock]}`, [id]),
    row: (id, lock) =>
      query(
        `SELECT ${isoSql("updated_at")} AS updated_at, pinned, owner, source FROM ${t.sessions} WHERE id = $1${LOCKS[lock]}`,
        [id],
      ),
    // One range of agent_sessions_owner, in its order (as listOwnerSql); qualified, as there.
    newest: (owner, n) =>
      query(
        `SELECT s.id FROM ${t.sessions} s WHERE s.owner = $1 ORDER BY s.updated_at DESC, s.activity DESC LIMIT $2`,
        [owner, n],
      ),
    present: (table) =>
      query("SELECT 1 AS found WHERE to_regclass($1) IS NOT NULL", [
        table === "vectors" ? h.vectors : h.changes,
      ]),
    vectors: (num) => query(`SELECT count(*) AS n FROM ${h.vectors} WHERE session_num = $1::bigint`, [num]),
    *freed(id, num) {
      if (!t.layout.readsPerShard) return countOf(yield query(freedSql(t), [num]));
      const hashes = (yield query(sessionHashesSql(t), [id])).map((r) => r.hash);
      if (hashes.length === 0) return 0;
      const shared = yield query(sharedHashesSql(t), [hashes, id]);
      return hashes.length - shared.length;
    },
    *content(id, num) {
      yield call(async (q) => {
        await h.release(q, { num, id });
        return [];
      });
      const rows = yield query(contentSql(t), [num, ...t.layout.routeParams(id)]);
      return { messages: countOf(rows, "messages"), compactions: countOf(rows, "compactions") };
    },
    keyed: (id, keys) => call(async (q) => [await h.deleteKeyed(q, id, keys)]),
    changes: (id) => query(eraseChangesSql(h.changes), [id]),
    *facts(id) {
      return yield* forgetSessionFacts(h.facts, id);
    },
    streams: (id) => command(h.forgetStream, [id]),
    rooms: (id) => forgetRoomRows(t, id),
    session: (id) => query(sessionSql(t), [id]),
    gone: (rows) => countOf(rows),
  };
}
