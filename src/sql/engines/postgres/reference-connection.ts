/**
 * The reference's own Postgres connection shape (`PostgresConnection`: `execute(query, args)` with `?`
 * placeholders), adapted to the `query(text, $n-params)` shape the rest of the backend speaks.
 */
import { StorageError } from "../../../errors.js";
import { describe } from "../../../message/describe.js";
/**
 * The one method agent-session calls on a Postgres connection: a `pg` Pool or Client, a PGlite instance, or any
 * look-alike (kysely-style structural typing, so neither package's types are needed). Placeholders are `$1…`.
 */
export interface PostgresQueryable {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** A value the reference's connection carries as a parameter (ours may also pass arrays, e.g. `ANY($1)`). */
export type PostgresConnectionArg = string | number | boolean | null;

/**
 * The reference's minimal connection: `execute(query, args)` receives SQL with `?` placeholders (one per
 * argument, in order) and returns `{ rows }`. Code written for the reference's Postgres providers passes this.
 */
export interface PostgresConnection {
  execute(query: string, args?: PostgresConnectionArg[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/** True when `value` has the reference's `execute()` shape. */
export function isPostgresConnection(value: unknown): value is PostgresConnection {
  return (
    typeof value === "object" && value !== null && typeof (value as PostgresConnection).execute === "function"
  );
}

/** Where a quoted or commented region that `$n` must not be looked for in ends, or -1 when `i` starts none. */
function skipQuoted(sql: string, i: number): number {
  const c = sql[i];
  if (c === "'" || c === '"') {
    // A doubled quote inside the literal is an escaped quote, so scanning on past it is right.
    const end = sql.indexOf(c, i + 1);
    return end < 0 ? sql.length : end + 1;
  }
  if (c === "-" && sql[i + 1] === "-") {
    const end = sql.indexOf("\n", i);
    return end < 0 ? sql.length : end + 1;
  }
  if (c === "/" && sql[i + 1] === "*") {
    const end = sql.indexOf("*/", i + 2);
    return end < 0 ? sql.length : end + 2;
  }
  if (c === "$") {
    const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i, i + 64));
    if (tag) {
      const end = sql.indexOf(tag[0], i + tag[0].length);
      return end < 0 ? sql.length : end + tag[0].length;
    }
  }
  return -1;
}

/**
 * Rewrites `$n` placeholders to positional `?` and lists which parameter each `?` takes (a `$n` used twice sends
 * its value twice), skipping string literals, quoted identifiers, comments and dollar quotes.
 */
export function toQuestionMarks(sql: string): { sql: string; order: number[] } {
  const order: number[] = [];
  let out = "";
  let i = 0;
  while (i < sql.length) {
    const skipped = skipQuoted(sql, i);
    if (skipped >= 0) {
      out += sql.slice(i, skipped);
      i = skipped;
      continue;
    }
    const placeholder = sql[i] === "$" ? /^\$(\d+)/.exec(sql.slice(i, i + 8)) : null;
    if (placeholder) {
      order.push(Number(placeholder[1]) - 1);
      out += "?";
      i += placeholder[0].length;
      continue;
    }
    out += sql[i];
    i += 1;
  }
  return { sql: out, order };
}

// The store sends a fixed set of statements, so each is translated once.
const translated = new Map<string, { sql: string; order: number[] }>();

/** Presents a reference-shaped connection as a `query()` one, translating placeholders on the way. */
export function queryableFromConnection(connection: PostgresConnection): PostgresQueryable {
  return {
    async query(text, params = []) {
      let statement = translated.get(text);
      if (!statement) {
        statement = toQuestionMarks(text);
        if (translated.size < 1000) translated.set(text, statement);
      }
      const args = statement.order.map((index) => params[index]) as PostgresConnectionArg[];
      const result: unknown = await connection.execute(statement.sql, args);
      // The shape promises `{ rows }`; anything else would surface as a TypeError far from its cause.
      if (!Array.isArray((result as { rows?: unknown } | null | undefined)?.rows)) {
        throw new StorageError(
          `The connection's execute() answered ${describe(result)}, expected { rows: [...] } (in: ${statement.sql.replace(/\s+/g, " ").slice(0, 120)})`,
        );
      }
      return result as { rows: Record<string, unknown>[] };
    },
  };
}
