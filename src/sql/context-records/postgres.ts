/**
 * Postgres's statements of the records of context rows (steps.ts has the steps), and their runs for the erasure
 * by key, the known ids and schema step 22 (context-store.ts runs the keys and the erasure by record): a DELETE
 * counts what it took in the same statement (a CTE); a look-up of no ids runs no statement; the backfill reads
 * names a page at a time, in byte order. On Citus both tables stay sharded by key and label: a row's record is a
 * plain column there, read by statements every shard runs, one statement per table.
 */

import { LEGACY_RULE } from "../../context/legacy-records.js";
import type { Query } from "../engines/postgres/client.js";
import { runProgram } from "../engines/postgres/program.js";
import { quote, statement, type Tables } from "../engines/postgres/tables.js";
import { command, countOf, query } from "../program.js";
import {
  backfillRecords as backfillProgram,
  type ContextTable,
  deleteKeyed as deleteKeyedProgram,
  type KnownIds,
  knownIds as knownIdsProgram,
  type RecordStatements,
} from "./steps.js";

/** How many names the backfill reads per page. */
const PAGE = 500;

/** An upsert's SET of the record (`tbl`: the target's name): the first recorded write decides it, later ones keep it. */
export const keepRecord = (tbl: string) =>
  `session_id = CASE WHEN ${tbl}.session_id IS NULL AND ${tbl}.owner IS NULL THEN EXCLUDED.session_id ELSE ${tbl}.session_id END,
    owner = CASE WHEN ${tbl}.session_id IS NULL AND ${tbl}.owner IS NULL THEN EXCLUDED.owner ELSE ${tbl}.owner END`;

/** The WHERE of the rows recorded so (context/records.ts recordParams as `$1`, `$2`). */
export const RECORDED = "(session_id = $1::text OR owner = $2::text)";

const NAME: Record<ContextTable, string> = { blocks: "key", entries: "label" };
const tableOf = (t: Tables, table: ContextTable) => (table === "blocks" ? t.blocks : t.entries);

// What a removal of session `$1` may take of the rows a list (`$2`) names: unrecorded ones, or its own.
const keyed = (column: string) =>
  `session_id = $1::text OR (${column} = ANY($2::text[]) AND owner IS NULL AND (session_id IS NULL OR session_id = $1::text))`;

const recordedKeysSql = statement(
  (t) => `SELECT key FROM ${t.blocks} WHERE ${RECORDED} ORDER BY key COLLATE "C"`,
);
const recordedSql = {
  blocks: statement(
    (t) => `WITH d AS (DELETE FROM ${t.blocks} WHERE ${RECORDED} RETURNING 1) SELECT count(*) AS n FROM d`,
  ),
  entries: statement(
    (t) => `WITH d AS (DELETE FROM ${t.entries} WHERE ${RECORDED} RETURNING 1) SELECT count(*) AS n FROM d`,
  ),
};
const keyedSql = {
  blocks: statement(
    (t) =>
      `WITH d AS (DELETE FROM ${t.blocks} WHERE ${keyed("key")} RETURNING 1) SELECT count(*) AS n FROM d`,
  ),
  entries: statement(
    (t) =>
      `WITH d AS (DELETE FROM ${t.entries} WHERE ${keyed("label")} RETURNING 1) SELECT count(*) AS n FROM d`,
  ),
};
const knownSessionsSql = statement(
  (t) => `SELECT id FROM ${t.sessions} WHERE id = ANY($1::text[])
     UNION SELECT session_id FROM ${t.heads} WHERE session_id = ANY($1::text[])`,
);
const knownOwnersSql = statement(
  (t) => `SELECT DISTINCT owner FROM ${t.sessions} WHERE owner = ANY($1::text[])`,
);
const namesSql = (t: Tables, table: ContextTable) => {
  const column = NAME[table];
  return `SELECT DISTINCT ${column} COLLATE "C" AS name FROM ${tableOf(t, table)}
         WHERE $1::text IS NULL OR ${column} COLLATE "C" > $1::text ORDER BY 1 LIMIT ${PAGE}`;
};

/** The statement table of context records on Postgres, for the tables `t`. */
export function postgresRecords(t: Tables): RecordStatements {
  return {
    recordedKeys: (record) => query(recordedKeysSql(t), record),
    keyOf: (row) => String(row.key),
    deleteRecorded: (table, record) => query(recordedSql[table](t), record),
    deleteKeyed: (table, id, names) => query(keyedSql[table](t), [id, [...names]]),
    gone: (rows) => countOf(rows),
    knownSessions: (ids) => (ids.length === 0 ? [] : query(knownSessionsSql(t), [ids])),
    knownOwners: (ids) => (ids.length === 0 ? [] : query(knownOwnersSql(t), [ids])),
    paged: true,
    names: (table, after) => query(namesSql(t, table), [after]),
    setRecord: (table, name, record) =>
      command(`UPDATE ${tableOf(t, table)} SET session_id = $1, owner = $2 WHERE ${NAME[table]} = $3`, [
        ...record,
        name,
      ]),
  };
}

/**
 * Deletes every block and entry recorded for session `id` and the unrecorded blocks of `keys` and entries filed
 * under them, in the caller's transaction (one statement per table: on Citus each is sharded by its own column).
 */
export function deleteKeyed(
  query: Query,
  t: Tables,
  id: string,
  keys: readonly string[],
): Promise<{ blocks: number; entries: number }> {
  return runProgram(query, deleteKeyedProgram(postgresRecords(t), id, keys));
}

/** Which of `ids` are stored sessions (registered or holding a head), and which are owners of registered ones. */
export function knownIds(query: Query, t: Tables, ids: readonly string[]): Promise<KnownIds> {
  return runProgram(query, knownIdsProgram(postgresRecords(t), ids));
}

/** Schema step 22's statements: the columns and their partial indexes. */
export function recordColumnsSql(t: Tables): string[] {
  return [t.blocks, t.entries].flatMap((table, i) => {
    const base = i === 0 ? "agent_context_blocks" : "agent_search_entries";
    return [
      `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS session_id text`,
      `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS owner text`,
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}${base}_session`)} ON ${table} (session_id) WHERE session_id IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}${base}_owner`)} ON ${table} (owner) WHERE owner IS NOT NULL`,
    ];
  });
}

/** Schema step 22's backfill: the rows stored before are given a record where the old rule is unambiguous. */
export function backfillRecords(query: Query, t: Tables): Promise<void> {
  return runProgram(query, backfillProgram(postgresRecords(t), LEGACY_RULE));
}
