/** SQLite's statements of kept streams (steps.ts): a drop, an expiry and an append are several each. */
import { command, query } from "../program.js";
import type { StreamStatements } from "./steps.js";

const HEAD = "SELECT stream_id, state, error, updated_at FROM agent_streams WHERE session_id = ?";

/** The statement table of kept streams on SQLite. */
export const sqliteStreams: StreamStatements = {
  several: true,
  start: (sessionId, streamId, now) => [
    command("DELETE FROM agent_stream_chunks WHERE session_id = ?", [sessionId]),
    command(
      `INSERT INTO agent_streams (session_id, stream_id, state, error, updated_at) VALUES (?, ?, 'live', NULL, ?)
       ON CONFLICT (session_id) DO UPDATE SET stream_id = excluded.stream_id, state = 'live', error = NULL,
         updated_at = excluded.updated_at`,
      [sessionId, streamId, now],
    ),
  ],
  head: (sessionId) => query(HEAD, [sessionId]),
  append: (sessionId, streamId, now, chunks) => [
    ...chunks.map(({ seq, chunk }) =>
      command("INSERT INTO agent_stream_chunks (session_id, stream_id, seq, chunk) VALUES (?, ?, ?, ?)", [
        sessionId,
        streamId,
        seq,
        chunk,
      ]),
    ),
    command("UPDATE agent_streams SET updated_at = ? WHERE session_id = ?", [now, sessionId]),
  ],
  end: (sessionId, streamId, state, error, now) =>
    command(
      `UPDATE agent_streams SET state = ?, error = ?, updated_at = ?
       WHERE session_id = ? AND stream_id = ? AND state = 'live'`,
      [state, error, now, sessionId, streamId],
    ),
  read: (sessionId) => query(HEAD, [sessionId]),
  chunks: (sessionId, streamId, afterSeq, limit) =>
    query(
      `SELECT seq, chunk FROM agent_stream_chunks WHERE session_id = ? AND stream_id = ? AND seq > ?
       ORDER BY seq LIMIT ?`,
      [sessionId, streamId, afterSeq, limit],
    ),
  drop: (sessionId, streamId) => [
    command("DELETE FROM agent_streams WHERE session_id = ? AND stream_id = ?", [sessionId, streamId]),
    command("DELETE FROM agent_stream_chunks WHERE session_id = ? AND stream_id = ?", [sessionId, streamId]),
  ],
  expire: (before) => query("SELECT session_id FROM agent_streams WHERE updated_at < ?", [before]),
  forget: (sessionId) => [
    command("DELETE FROM agent_streams WHERE session_id = ?", [sessionId]),
    command("DELETE FROM agent_stream_chunks WHERE session_id = ?", [sessionId]),
  ],
  countChunks: () => query("SELECT count(*) AS n FROM agent_stream_chunks"),
};
