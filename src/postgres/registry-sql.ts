/**
 * SQL fragments of the registry's writes that the append and step statements share: the write time, the activity
 * order and the usage counters.
 */
import { USAGE_COUNTERS } from "../store/usage-totals.js";
import type { Tables } from "./schema.js";

// Stored to the millisecond, so the ISO text a caller sees is exactly the value list() orders by.
export const NOW = "date_trunc('milliseconds', statement_timestamp())";

/**
 * The next value of the store-wide activity order (see registry.ts). In an UPDATE of the Citus layout it is
 * a subquery, which the coordinator evaluates: Citus refuses a VOLATILE function in an UPDATE.
 */
export const nextActivity = (t: Tables, update = false) => {
  const next = `nextval('${t.sessionsActivity.replace(/'/g, "''")}')`;
  return update && t.distributed ? `(SELECT ${next})` : next;
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
