/**
 * The checkpoints' room (src/sql/room.ts), what the engines take of it through the one list (src/sql/rooms/list.ts):
 * its tables on each engine (SQLite's migrations 27 and 30, Postgres's 26 and 29: ids as bytes, compact-ids.ts), three tables of a session (a LangGraph thread)
 * declared in owner-data.ts, deleted with the session, and re-sealed by a key rotation (rekey.ts). Its statements
 * and store classes live in the engine files (sqlite.ts, postgres.ts), which this file does not import.
 */
import type { PostgresNames, Room } from "../room.js";
import { POSTGRES_COMPACT_IDS, SQLITE_COMPACT_IDS } from "./compact-ids.js";
import { CHECKPOINT_TRANSFER_FIELDS, checkpointTables } from "./owner-data.js";
import { checkpointRekey, postgresCheckpointRekey, sqliteCheckpointRekey } from "./rekey.js";
import { CHECKPOINT } from "./sealing.js";

/**
 * SQLite's migration 27: checkpoints, their channel values per version (full or a delta, delta.ts), pending writes. The
 * checkpoints' rows (a few hundred bytes) live in their primary key's tree (WITHOUT ROWID: no second copy of the
 * keys); values and writes hold a message or more each, which an index tree would spill to an overflow page past
 * ~1 KB, so they keep a rowid table (a row stays on its page up to ~4 KB).
 */
const SQLITE_TABLES = [
  `CREATE TABLE IF NOT EXISTS agent_checkpoints (
    session_id TEXT NOT NULL,
    ns TEXT NOT NULL,
    id TEXT NOT NULL,
    parent_id TEXT,
    type TEXT NOT NULL,
    data BLOB NOT NULL,
    metadata_type TEXT NOT NULL,
    metadata BLOB NOT NULL,
    versions TEXT NOT NULL,
    sealed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, ns, id)
  ) WITHOUT ROWID`,
  // The page across sessions is newest first by id.
  "CREATE INDEX IF NOT EXISTS agent_checkpoints_id ON agent_checkpoints(id)",
  `CREATE TABLE IF NOT EXISTS agent_checkpoint_values (
    session_id TEXT NOT NULL,
    ns TEXT NOT NULL,
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    tag TEXT NOT NULL,
    type TEXT NOT NULL,
    base TEXT,
    prefix INTEGER NOT NULL,
    data BLOB,
    depth INTEGER NOT NULL,
    chain INTEGER NOT NULL,
    sealed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, ns, channel, version)
  )`,
  `CREATE TABLE IF NOT EXISTS agent_checkpoint_writes (
    session_id TEXT NOT NULL,
    ns TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT NOT NULL,
    data BLOB NOT NULL,
    task_path TEXT NOT NULL,
    sealed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, ns, checkpoint_id, task_id, idx)
  )`,
];

const tables = (n: PostgresNames) => ({
  cps: n.table("agent_checkpoints"),
  values: n.table("agent_checkpoint_values"),
  writes: n.table("agent_checkpoint_writes"),
});

/** Postgres's migration 26: checkpoints, their channel values per version (full or a delta, delta.ts), pending writes. */
function postgresCheckpointTables(n: PostgresNames): string[] {
  const t = tables(n);
  return [
    `CREATE TABLE IF NOT EXISTS ${t.cps} (
      session_id text NOT NULL,
      ns text NOT NULL,
      id text COLLATE "C" NOT NULL,
      parent_id text,
      type text NOT NULL,
      data bytea NOT NULL,
      metadata_type text NOT NULL,
      metadata bytea NOT NULL,
      versions text NOT NULL,
      sealed boolean NOT NULL DEFAULT false,
      PRIMARY KEY (session_id, ns, id)
    )`,
    `CREATE TABLE IF NOT EXISTS ${t.values} (
      session_id text NOT NULL,
      ns text NOT NULL,
      channel text NOT NULL,
      version text NOT NULL,
      tag text NOT NULL,
      type text NOT NULL,
      base text,
      prefix integer NOT NULL,
      data bytea,
      depth integer NOT NULL,
      chain bigint NOT NULL,
      sealed boolean NOT NULL DEFAULT false,
      PRIMARY KEY (session_id, ns, channel, version)
    )`,
    `CREATE TABLE IF NOT EXISTS ${t.writes} (
      session_id text NOT NULL,
      ns text NOT NULL,
      checkpoint_id text COLLATE "C" NOT NULL,
      task_id text NOT NULL,
      idx integer NOT NULL,
      channel text NOT NULL,
      type text NOT NULL,
      data bytea NOT NULL,
      task_path text NOT NULL,
      sealed boolean NOT NULL DEFAULT false,
      PRIMARY KEY (session_id, ns, checkpoint_id, task_id, idx)
    )`,
  ];
}

/** A session's checkpoints, values and writes deleted (its delete and erasure run them in their transaction). */
const FORGET_CHECKPOINTS = [
  "DELETE FROM agent_checkpoints WHERE session_id = ?",
  "DELETE FROM agent_checkpoint_values WHERE session_id = ?",
  "DELETE FROM agent_checkpoint_writes WHERE session_id = ?",
];

/**
 * The checkpoints' room: three tables of a session, sealed with the session's key (as sealing.ts `CHECKPOINT`);
 * on a Citus cluster on its session's node (Postgres's `plain`: every statement but a page across threads names it).
 */
export const checkpointsRoom: Room = {
  name: "checkpoints",
  transferFields: CHECKPOINT_TRANSFER_FIELDS,
  sealed: [CHECKPOINT],
  sqlite: {
    migrations: [{ version: 27, statements: SQLITE_TABLES }, SQLITE_COMPACT_IDS],
    ownerData: checkpointTables,
    forgetSession: FORGET_CHECKPOINTS,
    rekey: checkpointRekey(sqliteCheckpointRekey),
  },
  postgres: {
    migrations: [{ version: 26, statements: postgresCheckpointTables }, POSTGRES_COMPACT_IDS],
    ownerData: checkpointTables,
    // One statement per table.
    forgetSession: (n) =>
      Object.values(tables(n)).map((table) => `DELETE FROM ${table} WHERE session_id = $1`),
    rekey: (n) => checkpointRekey(postgresCheckpointRekey(n)),
  },
};
