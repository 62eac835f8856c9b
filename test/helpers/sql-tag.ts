import type BetterSqlite3 from "better-sqlite3";
import { loadBetterSqlite3 } from "../../src/sql/engines/sqlite/better-sqlite3.js";
import { DURABLE_OBJECT_VALUE_LIMIT } from "../../src/sql/engines/sqlite/sql-tag-driver.js";

const Database = loadBetterSqlite3();

// A Durable Object refuses a string or blob value over 2 MB; the helper does too, so a test proves the store
// never binds one (large messages must be split across rows).
function assertValueSizes(values: readonly unknown[]): void {
  for (const value of values) {
    const bytes =
      typeof value === "string"
        ? Buffer.byteLength(value, "utf8")
        : value instanceof Uint8Array
          ? value.byteLength
          : 0;
    if (bytes > DURABLE_OBJECT_VALUE_LIMIT) {
      throw new Error(
        `string or blob too big: ${bytes} bytes (a Durable Object allows ${DURABLE_OBJECT_VALUE_LIMIT})`,
      );
    }
  }
}

/** A Durable-Object-shaped `sql` tag over better-sqlite3, as the reference's tests drive it in Node. */
export function sqlTagAgent(path = ":memory:"): {
  sql: (strings: TemplateStringsArray, ...values: unknown[]) => unknown[];
  db: BetterSqlite3.Database;
} {
  const db = new Database(path);
  return {
    db,
    sql(strings, ...values) {
      assertValueSizes(values);
      const statement = db.prepare(strings.join("?"));
      if (statement.reader) return statement.all(...values);
      statement.run(...values);
      return [];
    },
  };
}
