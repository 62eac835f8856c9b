/** Statement text rewritten so the drivers do not prepare a statement again on every run. */

// An equality with a bare parameter on its right (`col = ?`), not part of `<=`, `>=`, `!=` or `==`.
const EQUALS_PARAMETER = /(?<![<>!=])=\s*\?/g;
// A LIMIT or OFFSET given by a bare parameter.
const LIMIT_PARAMETER = /\b(LIMIT|OFFSET)\s+\?/gi;

/**
 * `col = ?` written as `col = +?`, and `LIMIT ?` as `LIMIT +?`: the same comparison and count (a parameter has no
 * affinity, nor has `+?`) and the same plan, but SQLite marks such a bare parameter as able to change the plan
 * (an equality in a join or an ORDER BY query from 3.54; a LIMIT or OFFSET in 3.53 as well), and a driver that
 * clears bindings after each run (better-sqlite3 12 and 13, node:sqlite) then makes it re-prepare the statement
 * on every run: ~10-15 µs more for a small join, ~2.5 µs warm and ~8 µs with a search's cold caches for a LIMIT
 * (sqlite3_clear_bindings still expires what the bind calls spare; reported against 3.54.1). Done once per
 * prepared statement.
 */
export function withoutRebindReprepare(sql: string): string {
  return sql.replace(EQUALS_PARAMETER, "= +?").replace(LIMIT_PARAMETER, "$1 +?");
}
