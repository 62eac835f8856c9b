/** SQLite's kept streams: the steps in sql/streams/steps.ts over sql/streams/sqlite.ts. */

import type { SqlDriver } from "../engines/sqlite/driver.js";
import { runInTransaction, runProgram } from "../engines/sqlite/program.js";
import { sqliteStreams } from "./sqlite.js";
import type { StreamEngine } from "./steps.js";
import { forgetStream as forgetProgram, SqlStreams } from "./steps.js";

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

/** SQLite's kept streams: each call one statement or one transaction, so readers see whole appends. */
export class SqliteStreams extends SqlStreams {
  constructor(driver: SqlDriver) {
    super(engine(driver));
  }
}

// Synchronous throughout; the key of an append is looked up in its transaction, after the head is found live.
const engine = (driver: SqlDriver): StreamEngine => ({
  statements: sqliteStreams,
  run: async (program, transaction) =>
    transaction ? runInTransaction(driver, program) : runProgram(driver, program()),
  read: async (program, open) =>
    driver.read(() => {
      const found = runProgram(driver, program);
      return found && open(found, driver.keys);
    }),
  append: async (sessionId, _streamId, write) =>
    runInTransaction(driver, () => write({ key: () => driver.keys?.keyFor(sessionId) ?? null, guard: [] })) ??
    false,
});

/** Drops a session's kept stream and its chunks, in the caller's transaction (a session deleted or erased). */
export function forgetStream(driver: SqlDriver, sessionId: string): void {
  runProgram(driver, forgetProgram(sqliteStreams, sessionId));
}
