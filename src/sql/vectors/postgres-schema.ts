/**
 * The vector channel's tables on Postgres (the twin of src/sql/vectors/sqlite-schema.ts): their names under a
 * store's schema and prefix, the statements that create them, and what makes a vector current.
 */
import type { Layout } from "../engines/postgres/layout.js";
import type { Tables } from "../engines/postgres/tables.js";

/** Names of the vector tables and their indexes, quoted. */
export interface VectorTables {
  vectors: string;
  /** The store's messages table, which each vector row references. */
  messages: string;
  state: string;
  sessionIndex: string;
  hnswIndex: string;
  /** The store's layout: in Citus's, rows carry `session_id`, keyed and distributed by it, beside the messages. */
  layout: Layout;
  /** How a vector `v` finds its message `m` (on the session too in the Citus layout, a co-located join). */
  joinOn: string;
}

/** The vector tables of the store whose tables are `t`. */
export function vectorTables(t: Tables): VectorTables {
  const q = (name: string) => `"${t.prefix}${name}"`;
  const table = (name: string) => (t.schema ? `"${t.schema}".` : "") + q(name);
  return {
    vectors: table("agent_message_vectors"),
    messages: t.messages,
    state: table("agent_vector_state"),
    sessionIndex: q("agent_message_vectors_session"),
    hnswIndex: q("agent_message_vectors_hnsw"),
    layout: t.layout,
    joinOn: t.layout.joinOnSession("m", "v", "m.seq = v.seq"),
  };
}

/**
 * The statements that create the tables, run on the channel's first use only (a store without an embedder never
 * has them). `content_hash` is the message row's when its text was read (a mismatch = stale), `text_hash` the
 * embedded text's. Vectors are a float4[] (`vector`) without pgvector; with it they are an `embedding vector(n)`
 * column with an HNSW index, added once the first vector gives the size. A row references its message with ON
 * DELETE CASCADE, so it goes in the statement that deletes the message, whichever process deletes it (one without
 * an embedder, the CLI's prune, older code), and dropping the table drops the reference with it. `failure` is the
 * embedder's reason for refusing the text (no vector then); a table made before it gains the column on first use
 * (vectors-failures.ts).
 */
export function tableStatements(v: VectorTables): string[] {
  // In the Citus layout the messages are keyed by (session_id, seq), so the vectors are too (vectors-citus.ts
  // distributes them beside the messages).
  const key = v.layout.rowsCarrySession
    ? `session_id text NOT NULL,
      seq bigint NOT NULL,
      PRIMARY KEY (session_id, seq),
      FOREIGN KEY (session_id, seq) REFERENCES ${v.messages} (session_id, seq) ON DELETE CASCADE,`
    : `seq bigint PRIMARY KEY REFERENCES ${v.messages} (seq) ON DELETE CASCADE,`;
  return [
    `CREATE TABLE IF NOT EXISTS ${v.vectors} (
      ${key}
      session_num bigint NOT NULL,
      content_hash text,
      text_hash text NOT NULL,
      vector float4[],
      failure text
    )`,
    `CREATE INDEX IF NOT EXISTS ${v.sessionIndex} ON ${v.vectors} (session_num, seq)`,
    `CREATE TABLE IF NOT EXISTS ${v.state} (
      id integer PRIMARY KEY CHECK (id = 1),
      dimensions integer NOT NULL,
      kind text NOT NULL
    )`,
  ];
}

/** A vector `v` is its message `m`'s current one: same session, same content hash as when its text was read. */
export const CURRENT = "v.session_num = m.session_num AND v.content_hash IS NOT DISTINCT FROM m.content_hash";
