// Row scanners for the keyless contract's scan of the declared tables (src/testing/privacy/sealed-tables.ts): how
// many rows of a table hold a text in given columns, read with SQL (a column's bytes, not the store's decoding).
import { loadBetterSqlite3 } from "../../src/sql/engines/sqlite/better-sqlite3.js";
import type { SqlDriver } from "../../src/sql/engines/sqlite/driver.js";
import type { CountedTable } from "../../src/testing/privacy/tables.js";
import type { Runner } from "../fixtures/postgres-db.js";

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Rows of `table` in the SQLite file at `path` whose columns' bytes hold `text`; null when there is no table. */
export function sqliteRowsHolding(path: string) {
  return async (table: string, columns: readonly string[], text: string): Promise<number | null> => {
    // The build of better-sqlite3 this Node loads (the `better-sqlite3-node22` alias on Node >= 22).
    const Database = loadBetterSqlite3();
    const db = new Database(path, { readonly: true });
    try {
      const found = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table);
      if (!found) return null;
      // A column made on first use of a feature (a fact's `embedding`, with an embedder) may not exist yet.
      const made = new Set(
        (db.prepare("SELECT name FROM pragma_table_info(?)").all(table) as { name: string }[]).map(
          (c) => c.name,
        ),
      );
      const present = columns.filter((c) => made.has(c));
      if (present.length === 0) return 0;
      const where = present.map((c) => `instr(CAST(${ident(c)} AS BLOB), CAST(? AS BLOB)) > 0`).join(" OR ");
      const row = db
        .prepare(`SELECT count(*) AS n FROM ${ident(table)} WHERE ${where}`)
        .get(...present.map(() => text)) as {
        n: number;
      };
      return row.n;
    } finally {
      db.close();
    }
  };
}

/** Rows of `schema`.`table` on `db` whose columns hold `text` (bytea as bytes, others as text); null without it. */
export function postgresRowsHolding(db: Runner, schema: string) {
  return async (table: string, columns: readonly string[], text: string): Promise<number | null> => {
    const types = (
      await db.query(
        `SELECT a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type
        FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`,
        [`${ident(schema)}.${ident(table)}`],
      )
    ).rows as { column: string; type: string }[];
    if (types.length === 0) return null;
    const typeOf = new Map(types.map((t) => [t.column, t.type]));
    const where = columns
      .filter((c) => typeOf.has(c))
      .map((c) =>
        typeOf.get(c) === "bytea"
          ? `position(convert_to($1, 'UTF8') in ${ident(c)}) > 0`
          : `strpos(${ident(c)}::text, $1) > 0`,
      );
    if (where.length === 0) return 0;
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM ${ident(schema)}.${ident(table)} WHERE ${where.join(" OR ")}`,
      [text],
    );
    return (rows as { n: number }[])[0]?.n ?? 0;
  };
}

/** The rows of each of `tables` that exists in a SQLite database, read through the store's driver. */
export function sqliteRowCounts(driver: SqlDriver) {
  const all = <R>(sql: string, params: string[] = []) => driver.all<R>(sql, params);
  return async (tables: readonly CountedTable[]): Promise<Record<string, number>> => {
    const counts: Record<string, number> = {};
    for (const { table, except } of tables) {
      const found = all("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [table]);
      if (found.length === 0) continue;
      const [where, params] = exceptWhere(except, () => "?");
      const [row] = all<{ n: number }>(`SELECT count(*) AS n FROM ${ident(table)}${where}`, params);
      counts[table] = Number(row?.n ?? 0);
    }
    return counts;
  };
}

/** The rows of each of `tables` that exists in `schema` on `db` (a cluster's coordinator counts every shard). */
export function postgresRowCounts(db: Runner, schema: string) {
  return async (tables: readonly CountedTable[]): Promise<Record<string, number>> => {
    const counts: Record<string, number> = {};
    for (const { table, except } of tables) {
      const name = `${ident(schema)}.${ident(table)}`;
      const { rows } = await db.query("SELECT to_regclass($1) IS NOT NULL AS found", [name]);
      if (!(rows as { found: boolean }[])[0]?.found) continue;
      const [where, params] = exceptWhere(except, (i) => `$${i}`);
      const counted = await db.query(`SELECT count(*)::int AS n FROM ${name}${where}`, params);
      counts[table] = (counted.rows as { n: number }[])[0]?.n ?? 0;
    }
    return counts;
  };
}

/** The WHERE clause leaving out the rows `except` names (a column's value each), and its parameters. */
function exceptWhere(
  except: Readonly<Record<string, string>> | undefined,
  param: (i: number) => string,
): [string, string[]] {
  const entries = Object.entries(except ?? {});
  if (entries.length === 0) return ["", []];
  const tests = entries.map(([column], i) => `${ident(column)} IS DISTINCT FROM ${param(i + 1)}`);
  return [` WHERE ${tests.join(" AND ")}`, entries.map(([, value]) => value)];
}
