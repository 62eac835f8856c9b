/**
 * The planner statistics a purge refreshes (docs/PRIVACY.md, "Statistics"). `ANALYZE` samples rows into
 * `pg_statistic`, which the store's own role reads back through `pg_stats` (most common values, histogram bounds):
 * an erased session's words, names and owner id stay there after their rows are gone, and `VACUUM FULL` does not
 * touch them. `ANALYZE` again replaces a table's statistics with a sample of its live rows, except where it finds
 * none: an empty table (or an empty Citus shard) keeps the statistics it had. Those are dropped by altering each
 * declared column to its own type, which Postgres answers by removing the column's statistics (on an empty
 * relation it rewrites nothing).
 */

import type { PurgeRecorder } from "../../store/purge.js";
import type { Query } from "../engines/postgres/client.js";
import { POSTGRES_OWNER_DATA } from "../owner-data/postgres.js";

/** The declared columns of `table` (its name under the prefix) that can hold an owner's data or an id. */
export function statisticsColumns(table: string): string[] {
  const declared = POSTGRES_OWNER_DATA.find((t) => t.table === table);
  return Object.entries(declared?.columns ?? {})
    .filter(([, holds]) => holds !== "meta")
    .map(([column]) => column);
}

/** A table the purge works on: its quoted, qualified name and its name under the prefix. */
export interface PurgeTable {
  name: string;
  declared: string;
}

/**
 * The `ALTER TABLE` that drops the statistics of the `columns` of `table` that it has (each to its own type), or
 * undefined when it has none of them; `target` is the name the statement names (a Citus shard's, as a format slot).
 */
export async function dropStatisticsSql(
  query: Query,
  table: string,
  columns: readonly string[],
  target = table,
): Promise<string | undefined> {
  if (columns.length === 0) return undefined;
  const rows = await query<{ name: string; type: string }>(
    `SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
      WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attname = ANY($2::text[])
      ORDER BY attnum`,
    [table, [...columns]],
  );
  if (rows.length === 0) return undefined;
  return `ALTER TABLE ${target} ${rows.map((r) => `ALTER COLUMN "${r.name}" TYPE ${r.type}`).join(", ")}`;
}

/**
 * ANALYZE of `table`, then, when it holds no row, its declared columns' statistics dropped: afterwards `pg_stats`
 * holds a sample of live rows or nothing. `run` turns a lock not granted into the step's incomplete note.
 */
export async function refreshStatistics(
  query: Query,
  table: PurgeTable,
  recorder: PurgeRecorder,
  run: (sql: string) => Promise<string | undefined>,
): Promise<void> {
  await recorder.run("ANALYZE", table.name, () => run(`ANALYZE ${table.name}`));
  const [row] = await query<{ empty: boolean }>(`SELECT NOT EXISTS (SELECT 1 FROM ${table.name}) AS empty`);
  if (!row?.empty) return;
  const [stats] = await query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stats WHERE (quote_ident(schemaname) || '.' || quote_ident(tablename))::regclass = $1::regclass",
    [table.name],
  );
  if (!stats || stats.n === 0) return;
  const sql = await dropStatisticsSql(query, table.name, statisticsColumns(table.declared));
  if (sql) await recorder.run("drop statistics", table.name, () => run(sql));
}
