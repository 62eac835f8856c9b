import type BetterSqlite3 from "better-sqlite3";
import { loadBetterSqlite3 } from "../../src/sqlite/better-sqlite3.js";

const Database = loadBetterSqlite3();

/** A Durable-Object-shaped `sql` tag over better-sqlite3, as the reference's tests drive it in Node. */
export function sqlTagAgent(path = ":memory:"): {
  sql: (strings: TemplateStringsArray, ...values: unknown[]) => unknown[];
  db: BetterSqlite3.Database;
} {
  const db = new Database(path);
  return {
    db,
    sql(strings, ...values) {
      const statement = db.prepare(strings.join("?"));
      if (statement.reader) return statement.all(...values);
      statement.run(...values);
      return [];
    },
  };
}
