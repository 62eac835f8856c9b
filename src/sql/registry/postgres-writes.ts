/**
 * Postgres's SQL of the registry's writes: the fragments the append and step statements share (the write time, the activity
 * order and the usage counters) and the statements of a delete in each layout.
 */

import { USAGE_COUNTERS } from "../../store/usage-totals.js";
import { statement, type Tables } from "../engines/postgres/tables.js";

// Stored to the millisecond, so the ISO text a caller sees is exactly the value list() orders by.
export const NOW = "date_trunc('milliseconds', statement_timestamp())";

/**
 * The next value of the store-wide activity order (see postgres/registry.ts). In an UPDATE of the Citus layout it is
 * a subquery, which the coordinator evaluates: Citus refuses a VOLATILE function in an UPDATE.
 */
export const nextActivity = (t: Tables, update = false) => {
  const next = `nextval('${t.sessionsActivity.replace(/'/g, "''")}')`;
  return update ? t.layout.updateNextval(next) : next;
};

/** The counter assignments of `addUsage`, parameters from `$first` (input, output, cache read, cache write, cost). */
export function usageAssignments(first: number): string {
  return USAGE_COUNTERS.map(
    (counter, i) =>
      `${counter} = ${counter} + $${first + i}::${counter === "estimated_cost" ? "float8" : "bigint"}`,
  ).join(", ");
}

/**
 * True when every counter lies in the range that lets the usage be added (`usageBounds`, ten parameters from
 * `$first`): plain comparisons, so a refused addition is a row not updated, never an overflow error that would
 * abort the caller's transaction.
 */
export function usageFits(first: number): string {
  return USAGE_COUNTERS.map((counter, i) => {
    const type = counter === "estimated_cost" ? "float8" : "bigint";
    return `${counter} BETWEEN $${first + 2 * i}::${type} AND $${first + 2 * i + 1}::${type}`;
  }).join(" AND ");
}

// Messages (their search vectors and index entries go with them), overlays, the head and the registry row. `$2` is
// the locked head's number, NULL when the id has no stored data. The blocks and entries (sharded by key and label on
// Citus, not by session) are deleted by statements of their own (sql/context-records/postgres.ts deleteKeyed).
const deleteSql = statement((t) => {
  const own = t.layout.scope("$1::text");
  return `WITH m AS (DELETE FROM ${t.messages} WHERE session_num = $2::bigint${own(null)}),
    c AS (DELETE FROM ${t.compactions} WHERE session_num = $2::bigint${own(null)}),
    h AS (DELETE FROM ${t.heads} WHERE num = $2::bigint${own(null)}),
    r AS (DELETE FROM ${t.sessions} WHERE id = $1 RETURNING id)
    SELECT EXISTS (SELECT 1 FROM r) AS existed`;
});
// The registry row alone, in the Citus layout, when the id has no stored data (no head): Citus refuses the
// statement above with a NULL head number ("cannot execute a distributed query from a query on a shard"), and there
// are no messages, overlays or head to delete.
const deleteRowSql = statement(
  (t) =>
    `WITH r AS (DELETE FROM ${t.sessions} WHERE id = $1 RETURNING id) SELECT EXISTS (SELECT 1 FROM r) AS existed`,
);

/**
 * The statement and parameters of a delete of session `id` (head number `num`, null without stored data),
 * answering `existed`.
 */
export function deleteStatement(t: Tables, id: string, num: unknown): [string, unknown[]] {
  if (!t.layout.readsPerShard) return [deleteSql(t), [id, num]];
  return num === null ? [deleteRowSql(t), [id]] : [deleteSql(t), [id, num]];
}
