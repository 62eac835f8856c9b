/**
 * The declared Citus placement kept true on a distributed store (docs/POSTGRES.md, "The layout"): every table the
 * declaration (sql/owner-data/postgres.ts `citus`, `citusColumn`) places "by-session", "by-key" or "reference" that exists
 * and is not in `pg_dist_partition` is placed as declared, so a table a later migration adds to a store distributed
 * before it is not left a plain coordinator table. Checked with one catalog read on every open of a distributed store.
 */

import { SessionError } from "../../errors.js";
import type { Query } from "../../sql/engines/postgres/client.js";
import { qualified, quote, type Tables } from "../../sql/engines/postgres/tables.js";
import { POSTGRES_OWNER_DATA } from "../../sql/owner-data/postgres.js";
import { type CitusPlacement, citusShards, tablesPlaced } from "../../store/owner-data.js";

/** A declared table's Citus placement: distributed by `column` (co-located with `colocate`), or a reference table. */
export interface Placement {
  /** The declared name under the prefix. */
  table: string;
  placement: Exclude<CitusPlacement, "coordinator" | "none">;
  column?: string;
  /** The declared table whose co-location group it joins, or "none". */
  colocate?: string;
}

// In declaration order, the distributed ones first: the heads anchor the by-session group, so they go before the
// tables co-located with them.
const DECLARED: readonly Placement[] = [
  ...citusShards(POSTGRES_OWNER_DATA).map(({ table, column, colocate }) => {
    const placement = POSTGRES_OWNER_DATA.find((d) => d.table === table)?.citus as "by-session" | "by-key";
    return { table, placement, column, colocate };
  }),
  ...tablesPlaced(POSTGRES_OWNER_DATA, "reference").map((table) => ({
    table,
    placement: "reference" as const,
  })),
];

/**
 * The declared tables that exist but are not placed (not in `pg_dist_partition`), in the order they are placed: one
 * catalog read, none once a store's tables all are.
 */
export async function unplacedTables(query: Query, t: Tables): Promise<Placement[]> {
  const rows = await query<{ name: string }>(
    `SELECT name FROM unnest($1::text[]) AS name
     WHERE to_regclass(name) IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass(name))`,
    [DECLARED.map((d) => qualified(t, d.table))],
  );
  const names = new Set(rows.map((row) => row.name));
  return DECLARED.filter((d) => names.has(qualified(t, d.table)));
}

/**
 * Places every declared table that is not yet (see `unplacedTables`): its keys re-made to contain its distribution
 * column, then `create_distributed_table` co-located as declared, or `create_reference_table`. Runs in the caller's
 * transaction, which holds the migration lock, so the list read here is the one to act on.
 */
export async function placeDeclared(query: Query, t: Tables): Promise<void> {
  for (const d of await unplacedTables(query, t)) {
    const name = qualified(t, d.table);
    if (d.placement === "reference") {
      await query("SELECT create_reference_table($1)", [name]);
      continue;
    }
    const column = d.column as string;
    await keyByColumn(query, name, column);
    const colocate = !d.colocate || d.colocate === "none" ? "none" : qualified(t, d.colocate);
    await query("SELECT create_distributed_table($1, $2, colocate_with => $3)", [name, column, colocate]);
  }
}

/**
 * Makes every primary key and unique constraint of `table` contain `column`, as Citus requires of a distributed
 * table: one that does not gets it in front, under its own name (the tables' migrations create their Citus keys
 * already; this covers a key a migration made for one server). A table without the column cannot be placed: the
 * migration that made it did not give it its declared column, which no statement here could fill.
 */
async function keyByColumn(query: Query, table: string, column: string): Promise<void> {
  const [found] = await query<{ present: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2
       AND attnum > 0 AND NOT attisdropped) AS present`,
    [table, column],
  );
  if (!found?.present) {
    throw new SessionError(
      "STORAGE",
      `${table} has no column ${column}, by which the declaration distributes it on a Citus cluster`,
    );
  }
  const keys = await query<{ name: string; kind: string; columns: string[] }>(
    `SELECT c.conname AS name, c.contype::text AS kind,
        array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY AS k(num, i)
          JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.num ORDER BY k.i) AS columns
      FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype IN ('p', 'u')`,
    [table],
  );
  const changes = keys
    .filter((key) => !key.columns.includes(column))
    .flatMap((key) => {
      const columns = [column, ...key.columns].map(quote).join(", ");
      const kind = key.kind === "p" ? "PRIMARY KEY" : "UNIQUE";
      return [`DROP CONSTRAINT ${quote(key.name)}`, `ADD CONSTRAINT ${quote(key.name)} ${kind} (${columns})`];
    });
  if (changes.length > 0) await query(`ALTER TABLE ${table} ${changes.join(", ")}`);
}
