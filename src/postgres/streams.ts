import type { StreamChunk, StreamHead, StreamRead, StreamStore } from "../contract/streams.js";
import type { ContentKeys } from "../store/crypto/content-keys.js";
import { isSealed } from "../store/crypto/seal.js";
import { type StreamHeadRow, streamHead } from "../store/stream-rows.js";
import { openedChunk, storedChunk } from "../store/stream-seal.js";
import type { Executor, Query } from "./connection/client.js";
import { type Guarded, guardParams, guardSql, refused } from "./key-guard.js";
import { statement, type Tables } from "./schema.js";

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
// are guarded as a message's content is (key-guard.ts): sealed under a check still recorded, or in clear while the
// owner still has none; `keyed` false says the guard refused them (nothing written).
const appendSql = statement((t) => {
  const guard = guardSql(t, 6);
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
const endSql = statement(
  (t) => `UPDATE ${t.streams} SET state = $3, error = $4, updated_at = $5
    WHERE session_id = $1 AND stream_id = $2 AND state = 'live'`,
);
const headSql = statement(
  (t) => `SELECT stream_id, state, error, updated_at FROM ${t.streams} WHERE session_id = $1`,
);
// One statement, one snapshot: the head and the chunks it had when read.
const readSql = statement(
  (t) => `SELECT h.stream_id, h.state, h.error, h.updated_at, c.seq, c.chunk FROM ${t.streams} h
    LEFT JOIN LATERAL (
      SELECT seq, chunk FROM ${t.streamChunks}
      WHERE session_id = h.session_id AND stream_id = h.stream_id AND seq > $3 ORDER BY seq LIMIT $4
    ) c ON true
    WHERE h.session_id = $1 AND h.stream_id = $2 ORDER BY c.seq`,
);
const dropSql = statement(
  (t) => `WITH h AS (DELETE FROM ${t.streams} WHERE session_id = $1 AND stream_id = $2)
    DELETE FROM ${t.streamChunks} WHERE session_id = $1 AND stream_id = $2`,
);
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

/**
 * The key a session's chunks are sealed with (null: in clear) and what the append's guard relies on: an encrypted
 * owner's check (cached: no statement), a session a write of this process found in clear (no statement), else the
 * owner and its check looked up as a message's first write does (DECRYPT_FAILED for an owner with encrypted content
 * whose key this store lacks). On a cluster a write in clear carries no guard (as a message's routed append).
 */
async function chunkForm(
  query: Query,
  t: Tables,
  sessionId: string,
): Promise<Guarded & { key: Uint8Array | null }> {
  const keys = t.keys;
  if (!keys) return { key: null };
  const clear = t.distributed ? undefined : keys.knownClear(sessionId);
  if (clear) return { key: null, clear };
  const { value, guard } = await keys.guarded(query, (k) => {
    const key = k.keyFor(sessionId);
    return { key, owner: key ? null : k.ownerOf(sessionId) };
  });
  if (value.key) return { key: value.key, guard };
  return t.distributed ? { key: null } : { key: null, clear: keys.noteClear(sessionId, value.owner) };
}

/** Postgres's kept streams: each call one statement (a start: one transaction). */
export class PostgresStreams implements StreamStore {
  constructor(
    private readonly ready: () => Promise<Executor>,
    private readonly t: Tables,
  ) {}

  async start(sessionId: string, streamId: string, now: number): Promise<void> {
    const executor = await this.ready();
    await executor.transaction(async (query) => {
      await query(upsertSql(this.t), [sessionId, streamId, now]);
      await query(clearSql(this.t), [sessionId]);
    });
  }

  async append(
    sessionId: string,
    streamId: string,
    chunks: readonly StreamChunk[],
    now: number,
  ): Promise<boolean> {
    const executor = await this.ready();
    for (let tries = 1; ; tries++) {
      const form = await chunkForm(executor.query, this.t, sessionId);
      const [row] = await executor.query<{ n: number; keyed?: boolean }>(appendSql(this.t), [
        sessionId,
        streamId,
        now,
        chunks.map((c) => c.seq),
        chunks.map((c) => storedChunk(form.key, sessionId, streamId, c.seq, c.chunk)),
        ...guardParams(this.t, form),
      ]);
      if (row?.keyed !== false) return Number(row?.n ?? 0) > 0;
      refused(this.t, sessionId, form, tries, `the chunks of stream "${streamId}"`);
    }
  }

  async end(sessionId: string, streamId: string, error: string | null, now: number): Promise<void> {
    const executor = await this.ready();
    await executor.query(endSql(this.t), [
      sessionId,
      streamId,
      error === null ? "done" : "failed",
      error,
      now,
    ]);
  }

  async head(sessionId: string): Promise<StreamHead | null> {
    const executor = await this.ready();
    const [row] = await executor.query<StreamHeadRow>(headSql(this.t), [sessionId]);
    return row ? streamHead(row) : null;
  }

  async read(
    sessionId: string,
    streamId: string,
    afterSeq: number,
    limit: number,
  ): Promise<StreamRead | null> {
    const executor = await this.ready();
    const rows = await executor.query<StreamHeadRow & { seq: number | null; chunk: string | null }>(
      readSql(this.t),
      [sessionId, streamId, afterSeq, limit],
    );
    const [first] = rows;
    if (!first) return null;
    const stored = rows.flatMap((r) =>
      r.seq === null ? [] : [{ seq: Number(r.seq), chunk: r.chunk ?? "" }],
    );
    // Opened with the owner's key when sealed (stream-seal.ts): the owner is looked up only then.
    const open = (k: ContentKeys | undefined) =>
      stored.map((c) => ({ seq: c.seq, chunk: openedChunk(k, sessionId, streamId, c.seq, c.chunk) }));
    const keys = this.t.keys;
    const chunks =
      keys && stored.some((c) => isSealed(c.chunk)) ? await keys.run(executor.query, open) : open(undefined);
    return { ...streamHead(first), chunks };
  }

  async drop(sessionId: string, streamId: string): Promise<void> {
    const executor = await this.ready();
    await executor.query(dropSql(this.t), [sessionId, streamId]);
  }

  async expire(before: number): Promise<number> {
    const executor = await this.ready();
    const [row] = await executor.query<{ n: number }>(expireSql(this.t), [before]);
    return Number(row?.n ?? 0);
  }

  async countChunks(): Promise<number> {
    const executor = await this.ready();
    const [row] = await executor.query<{ n: string }>(countSql(this.t));
    return Number(row?.n ?? 0);
  }
}
