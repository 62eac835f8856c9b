/**
 * SQLite's migration 30 of checkpoints: checkpoint, parent and task ids stored as bytes (ids.ts: a uuid in 17 bytes,
 * not 36), and the pending writes' table WITHOUT ROWID (its rows no longer hold a message: a messages write is a
 * reference to its value, write-refs.ts, so a row is ~100 bytes and its primary key's tree is the table, with no
 * second copy of the keys). Both tables are rebuilt, their rows copied a page at a time with the ids re-encoded, so
 * a database written before reads as it did.
 */
import type { SqlDriver, SqlRow, SqlValue } from "../engines/sqlite/driver.js";
import type { SqliteMigration } from "../engines/sqlite/migration.js";
import { storedId } from "./ids.js";

/** The checkpoints' table as migration 30 leaves it (27's, with its ids as bytes). */
const CHECKPOINTS = `CREATE TABLE agent_checkpoints_next (
    session_id TEXT NOT NULL,
    ns TEXT NOT NULL,
    id BLOB NOT NULL,
    parent_id BLOB,
    type TEXT NOT NULL,
    data BLOB NOT NULL,
    metadata_type TEXT NOT NULL,
    metadata BLOB NOT NULL,
    versions TEXT NOT NULL,
    sealed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, ns, id)
  ) WITHOUT ROWID`;

/** The pending writes' table as migration 30 leaves it: ids as bytes, WITHOUT ROWID. */
const WRITES = `CREATE TABLE agent_checkpoint_writes_next (
    session_id TEXT NOT NULL,
    ns TEXT NOT NULL,
    checkpoint_id BLOB NOT NULL,
    task_id BLOB NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT NOT NULL,
    data BLOB NOT NULL,
    task_path TEXT NOT NULL,
    sealed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, ns, checkpoint_id, task_id, idx)
  ) WITHOUT ROWID`;

// Rows per page of the copy: a checkpoint row is a few hundred bytes.
const PAGE = 500;

interface Rebuild {
  table: string;
  create: string;
  columns: readonly string[];
  key: readonly string[];
  ids: readonly string[];
}

const REBUILDS: readonly Rebuild[] = [
  {
    table: "agent_checkpoints",
    create: CHECKPOINTS,
    columns: [
      "session_id",
      "ns",
      "id",
      "parent_id",
      "type",
      "data",
      "metadata_type",
      "metadata",
      "versions",
      "sealed",
    ],
    key: ["session_id", "ns", "id"],
    ids: ["id", "parent_id"],
  },
  {
    table: "agent_checkpoint_writes",
    create: WRITES,
    columns: [
      "session_id",
      "ns",
      "checkpoint_id",
      "task_id",
      "idx",
      "channel",
      "type",
      "data",
      "task_path",
      "sealed",
    ],
    key: ["session_id", "ns", "checkpoint_id", "task_id", "idx"],
    ids: ["checkpoint_id", "task_id"],
  },
];

/** Copies `r.table` into its rebuilt form a page at a time in key order, each id column as its stored form. */
function rebuild(driver: SqlDriver, r: Rebuild): void {
  driver.run(r.create);
  const list = r.columns.join(", ");
  const keys = r.key.join(", ");
  const insert = `INSERT INTO ${r.table}_next (${list}) VALUES (${r.columns.map(() => "?").join(", ")})`;
  for (let after: SqlValue[] | null = null; ; ) {
    const past: string = after === null ? "" : `WHERE (${keys}) > (${r.key.map(() => "?").join(", ")})`;
    const rows = driver.all(
      `SELECT ${list} FROM ${r.table} ${past} ORDER BY ${keys} LIMIT ${PAGE}`,
      after ?? [],
    );
    for (const row of rows) {
      driver.run(
        insert,
        r.columns.map((c) => {
          const value = row[c] as SqlValue;
          return r.ids.includes(c) && typeof value === "string" ? storedId(value) : value;
        }),
      );
    }
    if (rows.length < PAGE) break;
    const last: SqlRow = rows.at(-1)!;
    after = r.key.map((k) => last[k] as SqlValue);
  }
  driver.run(`DROP TABLE ${r.table}`);
  driver.run(`ALTER TABLE ${r.table}_next RENAME TO ${r.table}`);
}

/** Migration 30: both tables rebuilt, then the checkpoints' id index (the page across sessions) made again. */
export const COMPACT_IDS: SqliteMigration = {
  version: 30,
  statements: [],
  run: (driver) => {
    for (const r of REBUILDS) rebuild(driver, r);
    driver.run("CREATE INDEX IF NOT EXISTS agent_checkpoints_id ON agent_checkpoints(id)");
  },
};
