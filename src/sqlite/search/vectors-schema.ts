import type { SqlDriver } from "../connection/driver.js";

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
];

/** Adds `failure` to a vector table created before refusals were recorded. */
export function addFailureColumn(driver: SqlDriver): void {
  const columns = driver.column<string>("SELECT name FROM pragma_table_info('agent_message_vectors')");
  if (!columns.includes("failure")) driver.run("ALTER TABLE agent_message_vectors ADD COLUMN failure TEXT");
}

/** A vector row `v` is current when it was made from the message row `m` as it is now (same session and content). */
export const CURRENT = "v.session_num = m.session_num AND v.content_hash IS m.content_hash";

/** sqlite-vec refuses a JS number (bound as a float) for its rowid and partition key. */
export const int = (value: number | string) => BigInt(value);
