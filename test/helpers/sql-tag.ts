import Database from "better-sqlite3";

/** A Durable-Object-shaped `sql` tag over better-sqlite3, as the reference's tests drive it in Node. */
export function sqlTagAgent(path = ":memory:"): {
  sql: (strings: TemplateStringsArray, ...values: unknown[]) => unknown[];
  db: Database.Database;
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
