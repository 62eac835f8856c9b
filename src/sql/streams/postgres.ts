/**
 * Postgres's statements of kept streams (steps.ts): a drop, an expiry, a read and an append are one
 * statement each; a start is two, run in one transaction. On a Citus cluster the tables are sharded by session with
 * the messages (sql/owner-data/postgres.ts), and every statement but the expiry and the count names its session, so Citus routes
 * it to the session's node; an append there is two statements in one transaction (`lock`, then the chunks), since
 * Citus routes no statement whose `WITH` holds an `INSERT` (engines/postgres/layout.ts `insertsInCtes`).
 */

import { guardInside } from "../engines/postgres/owner-guard.js";
import { statement, type Tables } from "../engines/postgres/tables.js";
import { command, query } from "../program.js";
import type { StreamStatements } from "./steps.js";

const upsertSql = statement(
  (
    t,
  ) => `INSERT INTO ${t.streams} (session_id, stream_id, state, error, updated_at) VALUES ($1, $2, 'live', NULL, $3)
    ON CONFLICT (session_id) DO UPDATE SET stream_id = EXCLUDED.stream_id, state = 'live', error = NULL,
      updated_at = EXCLUDED.updated_at`,
);
const clearSql = statement((t) => `DELETE FROM ${t.streamChunks} WHERE session_id = $1`);
// The head's row lock orders an append against a start, end or drop of the same session: the chunks go in only
// while the stream is the session's and live, in the statement that checks it. With keys (every store) the chunks
// are guarded as a message's content is (engines/postgres/owner-guard.ts): sealed under a check still recorded, or in clear while the
// owner still has none; `keyed` false says the guard refused them (nothing written). On a cluster the guard is a
// statement before this one, in its transaction (sql/streams/postgres-store.ts).
const appendSql = statement((t) => {
  const guard = guardInside(t, 6, "$1::text");
  return `WITH ${guard.ctes}s AS (
      UPDATE ${t.streams} SET updated_at = $3
      WHERE session_id = $1 AND stream_id = $2 AND state = 'live'${guard.and} RETURNING 1
    ), i AS (
      INSERT INTO ${t.streamChunks} (session_id, stream_id, seq, chunk)
      SELECT $1, $2, u.seq, u.chunk FROM unnest($4::integer[], $5::text[]) AS u(seq, chunk)
      WHERE EXISTS (SELECT 1 FROM s)
    )
    SELECT (SELECT count(*)::integer FROM s) AS n${guard.and ? ", (SELECT keyed FROM gd) AS keyed" : ""}`;
});
// A cluster's append (steps.ts `lock`): the head locked and its time moved while the stream is live, then
// the chunks inserted in the same transaction. The insert reads the head on the session's shard, so Citus pushes it
// down to that one node; from `unnest` alone it would pull the rows to the coordinator and copy them out.
const lockSql = statement(
  (t) => `UPDATE ${t.streams} SET updated_at = $3
    WHERE session_id = $1 AND stream_id = $2 AND state = 'live' RETURNING 1 AS n`,
);
const chunksSql = statement(
  (t) => `INSERT INTO ${t.streamChunks} (session_id, stream_id, seq, chunk)
    SELECT h.session_id, h.stream_id, u.seq, u.chunk
    FROM ${t.streams} h, unnest($3::integer[], $4::text[]) AS u(seq, chunk)
    WHERE h.session_id = $1 AND h.stream_id = $2`,
);
const endSql = statement(
  (t) => `UPDATE ${t.streams} SET state = $3, error = $4, updated_at = $5
    WHERE session_id = $1 AND stream_id = $2 AND state = 'live'`,
);
const headSql = statement(
  (t) => `SELECT stream_id, state, error, updated_at FROM ${t.streams} WHERE session_id = $1`,
);
// One statement, one snapshot: the head and the chunks it had when read. Both tables name the session by its value:
// Citus routes a lateral join only when each side does (`h.session_id` alone fans the read out to every shard).
const readSql = statement(
  (t) => `SELECT h.stream_id, h.state, h.error, h.updated_at, c.seq, c.chunk FROM ${t.streams} h
    LEFT JOIN LATERAL (
      SELECT seq, chunk FROM ${t.streamChunks}
      WHERE session_id = $1 AND stream_id = h.stream_id AND seq > $3 ORDER BY seq LIMIT $4
    ) c ON true
    WHERE h.session_id = $1 AND h.stream_id = $2 ORDER BY c.seq`,
);
const dropSql = statement(
  (t) => `WITH h AS (DELETE FROM ${t.streams} WHERE session_id = $1 AND stream_id = $2)
    DELETE FROM ${t.streamChunks} WHERE session_id = $1 AND stream_id = $2`,
);
// The one statement across sessions besides the count: a sweep of idle streams, which on a cluster fans out to every
// shard (the heads' delete, then the chunks' by the session ids it answered), run when a stream starts.
const expireSql = statement(
  (t) => `WITH h AS (DELETE FROM ${t.streams} WHERE updated_at < $1 RETURNING session_id),
    c AS (DELETE FROM ${t.streamChunks} WHERE session_id IN (SELECT session_id FROM h))
    SELECT count(*)::integer AS n FROM h`,
);
/** @internal a session's kept stream and its chunks (a registry delete and an erasure run it in theirs). */
export const forgetStreamSql = statement(
  (t) => `WITH h AS (DELETE FROM ${t.streams} WHERE session_id = $1)
    DELETE FROM ${t.streamChunks} WHERE session_id = $1`,
);
const countSql = statement((t) => `SELECT count(*)::bigint AS n FROM ${t.streamChunks}`);

/** The statement table of kept streams in the tables `t`. */
export function postgresStreams(t: Tables): StreamStatements {
  return {
    several: false,
    // The head first: its row lock orders the start against an append of the same session.
    start: (sessionId, streamId, now) => [
      command(upsertSql(t), [sessionId, streamId, now]),
      command(clearSql(t), [sessionId]),
    ],
    head: (sessionId) => query(headSql(t), [sessionId]),
    // Asked at each call: the store sets its tables' layout as it opens.
    lock: (sessionId, streamId, now) =>
      t.layout.insertsInCtes ? null : query(lockSql(t), [sessionId, streamId, now]),
    append: (sessionId, streamId, now, chunks, guard) =>
      t.layout.insertsInCtes
        ? query(appendSql(t), [
            sessionId,
            streamId,
            now,
            chunks.map((c) => c.seq),
            chunks.map((c) => c.chunk),
            ...guard,
          ])
        : command(chunksSql(t), [sessionId, streamId, chunks.map((c) => c.seq), chunks.map((c) => c.chunk)]),
    end: (sessionId, streamId, state, error, now) =>
      command(endSql(t), [sessionId, streamId, state, error, now]),
    read: (sessionId, streamId, afterSeq, limit) => query(readSql(t), [sessionId, streamId, afterSeq, limit]),
    drop: (sessionId, streamId) => command(dropSql(t), [sessionId, streamId]),
    expire: (before) => query(expireSql(t), [before]),
    forget: (sessionId) => command(forgetStreamSql(t), [sessionId]),
    countChunks: () => query(countSql(t)),
  };
}
