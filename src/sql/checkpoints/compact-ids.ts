/**
 * The checkpoints' second schema step, ids stored as bytes (ids.ts: a uuid in 17 bytes, not 36, sorting as its text).
 * SQLite's migration 30 rebuilds the checkpoints' and pending writes' tables, their rows copied a page at a time with
 * the ids re-encoded, and makes the writes' table WITHOUT ROWID (its rows no longer hold a message: a messages write
 * is a reference to its value, write-refs.ts, so a row is ~100 bytes and its primary key's tree is the table, with no
 * second copy of the keys). Postgres's migration 29 changes each id column's type in place (a table rewrite, its keys
 * rebuilt): a canonical uuid becomes its stored form in SQL; any other id first `00` and its UTF-8, then, in
 * JavaScript, its stored form (the greatest uuid below it is ids.ts's to find), row by row: such ids are an app's
 * own, rare. On Citus the change reaches every shard; the distribution column (`session_id`) is untouched. A
 * database written before reads as it did. Declarations only (room.ts): engine code is imported as types.
 */
import type { Query } from "../engines/postgres/client.js";
import type { SqlDriver, SqlRow, SqlValue } from "../engines/sqlite/driver.js";
import type { SqliteMigration } from "../engines/sqlite/migration.js";
import type { PostgresNames, PostgresRoomMigration } from "../room.js";
import { idOf, storedId } from "./ids.js";

// Rows per page of a copy or fix-up: a checkpoint row is a few hundred bytes.
const PAGE = 500;

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
export const SQLITE_COMPACT_IDS: SqliteMigration = {
  version: 30,
  statements: [],
  run: (driver) => {
    for (const r of REBUILDS) rebuild(driver, r);
    driver.run("CREATE INDEX IF NOT EXISTS agent_checkpoints_id ON agent_checkpoints(id)");
  },
};

const UUID = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";

// A column's new value in SQL: a canonical uuid's stored form, or any other id as `00` and its UTF-8.
const using = (column: string) =>
  `CASE WHEN ${column} ~ '${UUID}' THEN '\\x01'::bytea || decode(replace(${column}, '-', ''), 'hex')
    ELSE '\\x00'::bytea || convert_to(${column}, 'UTF8') END`;

const TABLES = [
  { table: "agent_checkpoints", ids: ["id", "parent_id"] },
  { table: "agent_checkpoint_writes", ids: ["checkpoint_id", "task_id"] },
] as const;

/**
 * Each id column still `text` changed to `bytea` (one ALTER a table). Only those: a step re-run over tables already
 * changed (a store whose version was set back, as the migration tests do) finds none, so the step is idempotent as
 * every schema step is; a USING of `~` on a bytea column would fail.
 */
async function alterTextColumns(query: Query, n: PostgresNames): Promise<void> {
  for (const { table, ids } of TABLES) {
    const name = n.table(table);
    const rows = await query<{ column: string }>(
      `SELECT attname AS column FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = ANY($2::text[])
        AND atttypid = 'text'::regtype AND NOT attisdropped ORDER BY attnum`,
      [name, ids],
    );
    if (rows.length === 0) continue;
    const changes = rows.map(({ column }) => `ALTER COLUMN ${column} TYPE bytea USING ${using(column)}`);
    await query(`ALTER TABLE ${name} ${changes.join(", ")}`);
  }
}

/** The ids stored as `00` and their UTF-8 by the statements, given their stored form where it differs. */
async function fixIds(query: Query, n: PostgresNames): Promise<void> {
  for (const { table, ids } of TABLES) {
    const name = n.table(table);
    for (const column of ids) {
      // An id whose stored form starts `00` keeps it: the fix-up ends when none is left to change.
      for (let after: Uint8Array = new Uint8Array([0]); ; ) {
        const rows = await query<{ v: Uint8Array }>(
          `SELECT DISTINCT ${column} AS v FROM ${name}
          WHERE substring(${column} from 1 for 1) = '\\x00'::bytea AND ${column} > $1::bytea ORDER BY 1 LIMIT ${PAGE}`,
          [after],
        );
        for (const { v } of rows) {
          const id = idOf(v);
          const stored = storedId(id);
          if (stored[0] !== 0) {
            await query(`UPDATE ${name} SET ${column} = $1::bytea WHERE ${column} = $2::bytea`, [stored, v]);
          }
        }
        if (rows.length < PAGE) break;
        after = rows.at(-1)!.v;
      }
    }
  }
}

/** Postgres's migration 29 of the checkpoints' room: its columns changed, then the ids that are not uuids fixed up. */
export const POSTGRES_COMPACT_IDS: PostgresRoomMigration = {
  version: 29,
  statements: () => [],
  run: async (query, n) => {
    await alterTextColumns(query, n);
    await fixIds(query, n);
  },
};
