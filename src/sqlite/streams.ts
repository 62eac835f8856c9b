import type { StreamChunk, StreamHead, StreamRead, StreamStore } from "../contract/streams.js";
import { type StreamHeadRow, streamHead } from "../store/stream-rows.js";
import { openedChunk, storedChunk } from "../store/stream-seal.js";
import type { SqlDriver } from "./connection/driver.js";

/** Migration 19: a session's kept stream (one row per session) and its chunks, in order. */
export const STREAM_TABLES = [
  `CREATE TABLE IF NOT EXISTS agent_streams (
    session_id TEXT PRIMARY KEY,
    stream_id TEXT NOT NULL,
    state TEXT NOT NULL,
    error TEXT,
    updated_at INTEGER NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS agent_streams_updated ON agent_streams(updated_at)",
  `CREATE TABLE IF NOT EXISTS agent_stream_chunks (
    session_id TEXT NOT NULL,
    stream_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    chunk TEXT NOT NULL,
    PRIMARY KEY (session_id, stream_id, seq)
  ) WITHOUT ROWID`,
];

const HEAD = "SELECT stream_id, state, error, updated_at FROM agent_streams WHERE session_id = ?";

/** SQLite's kept streams: each call one statement or one transaction, so readers see whole appends. */
export class SqliteStreams implements StreamStore {
  constructor(private readonly driver: SqlDriver) {}

  async start(sessionId: string, streamId: string, now: number): Promise<void> {
    this.driver.transaction(() => {
      this.driver.run("DELETE FROM agent_stream_chunks WHERE session_id = ?", [sessionId]);
      this.driver.run(
        `INSERT INTO agent_streams (session_id, stream_id, state, error, updated_at) VALUES (?, ?, 'live', NULL, ?)
         ON CONFLICT (session_id) DO UPDATE SET stream_id = excluded.stream_id, state = 'live', error = NULL,
           updated_at = excluded.updated_at`,
        [sessionId, streamId, now],
      );
    });
  }

  async append(
    sessionId: string,
    streamId: string,
    chunks: readonly StreamChunk[],
    now: number,
  ): Promise<boolean> {
    return this.driver.transaction(() => {
      if (!this.isLive(sessionId, streamId)) return false;
      // An encrypted owner's chunks are sealed as its messages are (the key checked in this transaction); an
      // owner with encrypted content and no key here is refused, DECRYPT_FAILED.
      const key = this.driver.keys?.keyFor(sessionId) ?? null;
      for (const { seq, chunk } of chunks) {
        this.driver.run(
          "INSERT INTO agent_stream_chunks (session_id, stream_id, seq, chunk) VALUES (?, ?, ?, ?)",
          [sessionId, streamId, seq, storedChunk(key, sessionId, streamId, seq, chunk)],
        );
      }
      this.driver.run("UPDATE agent_streams SET updated_at = ? WHERE session_id = ?", [now, sessionId]);
      return true;
    });
  }

  async end(sessionId: string, streamId: string, error: string | null, now: number): Promise<void> {
    this.driver.run(
      `UPDATE agent_streams SET state = ?, error = ?, updated_at = ?
       WHERE session_id = ? AND stream_id = ? AND state = 'live'`,
      [error === null ? "done" : "failed", error, now, sessionId, streamId],
    );
  }

  async head(sessionId: string): Promise<StreamHead | null> {
    const row = this.driver.get<StreamHeadRow>(HEAD, [sessionId]);
    return row ? streamHead(row) : null;
  }

  async read(
    sessionId: string,
    streamId: string,
    afterSeq: number,
    limit: number,
  ): Promise<StreamRead | null> {
    return this.driver.read(() => {
      const row = this.driver.get<StreamHeadRow>(HEAD, [sessionId]);
      if (row?.stream_id !== streamId) return null;
      const chunks = this.driver.all<StreamChunk>(
        `SELECT seq, chunk FROM agent_stream_chunks WHERE session_id = ? AND stream_id = ? AND seq > ?
         ORDER BY seq LIMIT ?`,
        [sessionId, streamId, afterSeq, limit],
      );
      const opened = chunks.map(({ seq, chunk }) => ({
        seq: Number(seq),
        chunk: openedChunk(this.driver.keys, sessionId, streamId, Number(seq), chunk),
      }));
      return { ...streamHead(row), chunks: opened };
    });
  }

  async drop(sessionId: string, streamId: string): Promise<void> {
    this.driver.transaction(() => {
      this.driver.run("DELETE FROM agent_streams WHERE session_id = ? AND stream_id = ?", [
        sessionId,
        streamId,
      ]);
      this.driver.run("DELETE FROM agent_stream_chunks WHERE session_id = ? AND stream_id = ?", [
        sessionId,
        streamId,
      ]);
    });
  }

  async expire(before: number): Promise<number> {
    return this.driver.transaction(() => {
      const ids = this.driver.column<string>("SELECT session_id FROM agent_streams WHERE updated_at < ?", [
        before,
      ]);
      for (const sessionId of ids) forgetStream(this.driver, sessionId);
      return ids.length;
    });
  }

  async countChunks(): Promise<number> {
    return Number(this.driver.get<{ n: number }>("SELECT count(*) AS n FROM agent_stream_chunks")?.n ?? 0);
  }

  private isLive(sessionId: string, streamId: string): boolean {
    const row = this.driver.get<StreamHeadRow>(HEAD, [sessionId]);
    return row?.stream_id === streamId && row.state === "live";
  }
}

/** Drops a session's kept stream and its chunks, in the caller's transaction (a session deleted or erased). */
export function forgetStream(driver: SqlDriver, sessionId: string): void {
  driver.run("DELETE FROM agent_streams WHERE session_id = ?", [sessionId]);
  driver.run("DELETE FROM agent_stream_chunks WHERE session_id = ?", [sessionId]);
}
