import type { SqlDriver } from "../engines/sqlite/driver.js";
import { isReadonlyError } from "../engines/sqlite/readonly.js";

/** The vector tables of a SQLite store, and when a vector row is current. */

// Created on the channel's first use only: a store without an embedder never has them. `content_hash` is the
// message row's when its text was read (a mismatch = stale), `text_hash` the embedded text's (an update that keeps
// the text keeps the vector). `vector` holds float32 bytes in the plain table; with sqlite-vec the vectors live in
// agent_message_vectors_vec (rowid = seq) and `vector` stays NULL. `failure` is the embedder's reason for refusing the
// text (no vector then); a store made before it gains the column on first use (addFailureColumn).
export const VECTOR_TABLES = [
  `CREATE TABLE IF NOT EXISTS agent_message_vectors (
    seq INTEGER PRIMARY KEY,
    session_num INTEGER NOT NULL,
    content_hash TEXT,
    text_hash TEXT NOT NULL,
    vector BLOB,
    failure TEXT
  )`,
  "CREATE INDEX IF NOT EXISTS agent_message_vectors_session ON agent_message_vectors(session_num, seq)",
  `CREATE TABLE IF NOT EXISTS agent_vector_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    dimensions INTEGER NOT NULL,
    kind TEXT NOT NULL
  )`,
  // A message's vector goes in the transaction that deletes the message, whichever connection deletes it (one
  // without an embedder, the CLI's prune, older code): one primary-key delete per deleted message; appends and
  // updates never fire it. Stored with the schema, so dropping agent_message_vectors means dropping this first
  // (RESET_STATEMENTS; a store opened after a hand-made drop drops it: dropOrphanTrigger).
  `CREATE TRIGGER IF NOT EXISTS agent_message_vectors_on_delete AFTER DELETE ON agent_messages BEGIN
    DELETE FROM agent_message_vectors WHERE seq = OLD.seq;
  END`,
];

/**
 * With sqlite-vec: a connection without the extension cannot touch its table (a statement naming it fails), so a
 * deleted vector row leaves its seq in agent_message_vectors_gone, and a connection with the extension removes
 * those from agent_message_vectors_vec (`drainGone` in vectors.ts) before they can crowd a nearest read.
 */
export const VEC_GONE_TABLES = [
  "CREATE TABLE IF NOT EXISTS agent_message_vectors_gone (seq INTEGER PRIMARY KEY)",
  `CREATE TRIGGER IF NOT EXISTS agent_message_vectors_tombstone AFTER DELETE ON agent_message_vectors BEGIN
    INSERT OR IGNORE INTO agent_message_vectors_gone (seq) VALUES (OLD.seq);
  END`,
];

/** True (a row) when sqlite-vec's table exists. */
export const VEC_TABLE_PRESENT =
  "SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'agent_message_vectors_vec'";

/**
 * What vectors.reset() runs in one transaction: the delete trigger first (it names the table), sqlite-vec's table
 * (which takes its shadow tables; the connection must have the extension), the tombstones, the vector table (its
 * index and tombstone trigger go with it) and the state row's table.
 */
export const RESET_STATEMENTS = [
  "DROP TRIGGER IF EXISTS agent_message_vectors_on_delete",
  "DROP TABLE IF EXISTS agent_message_vectors_vec",
  "DROP TABLE IF EXISTS agent_message_vectors_gone",
  "DROP TABLE IF EXISTS agent_message_vectors",
  "DROP TABLE IF EXISTS agent_vector_state",
];

/**
 * Drops the delete trigger when its table was dropped by hand (as a model change once needed): left, it fails
 * every message delete with "no such table". Run on opening a store, one read of the schema when all is well.
 */
export function dropOrphanTrigger(driver: SqlDriver): void {
  const orphan = driver.get(
    `SELECT 1 AS orphan FROM sqlite_master WHERE type = 'trigger' AND name = 'agent_message_vectors_on_delete'
     AND NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agent_message_vectors')`,
  );
  if (!orphan) return;
  try {
    driver.run("DROP TRIGGER IF EXISTS agent_message_vectors_on_delete");
  } catch (error) {
    // A read-only connection deletes no message, so the trigger cannot fail it; the next writer drops it.
    if (!isReadonlyError(error)) throw error;
  }
}

/** Vector rows removed per transaction when orphans are swept or sqlite-vec's rows drained (bounded lock time). */
export const SWEEP_BATCH = 1_000;

/** Adds `failure` to a vector table created before refusals were recorded. */
export function addFailureColumn(driver: SqlDriver): void {
  const columns = driver.column<string>("SELECT name FROM pragma_table_info('agent_message_vectors')");
  if (!columns.includes("failure")) driver.run("ALTER TABLE agent_message_vectors ADD COLUMN failure TEXT");
}

/** A vector row `v` is current when it was made from the message row `m` as it is now (same session and content). */
export const CURRENT = "v.session_num = m.session_num AND v.content_hash IS m.content_hash";

/** sqlite-vec refuses a JS number (bound as a float) for its rowid and partition key. */
export const int = (value: number | string) => BigInt(value);
