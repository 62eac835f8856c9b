/**
 * Postgres's migration 29 of checkpoints: checkpoint, parent and task ids stored as bytea (ids.ts: a uuid in 17
 * bytes, not 37). Each id column changes type in place (a table rewrite, its keys rebuilt): a canonical uuid
 * becomes its stored form in SQL; any other id first `00` and its UTF-8, then, in JavaScript, its stored form (the
 * greatest uuid below it is ids.ts's to find), rows by row: such ids are an app's own, rare. On Citus the change
 * reaches every shard; the distribution column (`session_id`) is untouched.
 */
import type { Query } from "../engines/postgres/client.js";
import type { PostgresMigration } from "../engines/postgres/migration.js";
import { qualified, type Tables } from "../engines/postgres/tables.js";
import { idOf, storedId } from "./ids.js";

const UUID = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";

// A column's new value in SQL: a canonical uuid's stored form, or any other id as `00` and its UTF-8.
const using = (column: string) =>
  `CASE WHEN ${column} ~ '${UUID}' THEN '\\x01'::bytea || decode(replace(${column}, '-', ''), 'hex')
    ELSE '\\x00'::bytea || convert_to(${column}, 'UTF8') END`;

const TABLES = [
  { table: "agent_checkpoints", ids: ["id", "parent_id"] },
  { table: "agent_checkpoint_writes", ids: ["checkpoint_id", "task_id"] },
] as const;

function statements(t: Tables): string[] {
  return TABLES.map(
    ({ table, ids }) =>
      `ALTER TABLE ${qualified(t, table)} ${ids
        .map((c) => `ALTER COLUMN ${c} TYPE bytea USING ${using(c)}`)
        .join(", ")}`,
  );
}

// Rows per page of the fix-up.
const PAGE = 500;

/** The ids stored as `00` and their UTF-8 by the statements, given their stored form where it differs. */
async function fixIds(query: Query, t: Tables): Promise<void> {
  for (const { table, ids } of TABLES) {
    const name = qualified(t, table);
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

/** Migration 29 of the checkpoints' room. */
export const COMPACT_IDS: PostgresMigration = { version: 29, statements, run: fixIds };
