/**
 * A search's role and time filters as a condition inside the index read, so the newest matches a search takes
 * can be the filter's own: filtering only after the newest matches were taken found nothing for a time range
 * older than them. The condition is never stricter than passesFilters (search/options.ts), which still decides
 * every hit: a time stored as toISOString writes it (24 ASCII characters, a four-digit year) is compared here
 * exactly as JavaScript compares it, and any other stored form (an adopted reference row's `YYYY-MM-DD HH:MM:SS`,
 * an extended year) passes the condition and is judged in JavaScript.
 */
import { hasFilters, type SearchPlan } from "../../search/options.js";
import type { SqlValue } from "../connection/driver.js";

/** A condition on the messages `m` and its parameters, in order. */
export interface FilterSql {
  where: string;
  params: SqlValue[];
}

// The form passesFilters compares as a string, without parsing it again.
const CANONICAL_TIME = `m.created_at GLOB
  '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'`;

/**
 * The plan's role and time filters on the messages `m`, and the session a lookup keeps to (`sessionNum`, see
 * state.ts); undefined when the plan has neither filter.
 */
export function filterSql(plan: SearchPlan, sessionNum?: number): FilterSql | undefined {
  if (!hasFilters(plan)) return undefined;
  const conditions: string[] = [];
  const params: SqlValue[] = [];
  if (sessionNum !== undefined) {
    conditions.push("m.session_num = ?");
    params.push(sessionNum);
  }
  if (plan.roles !== undefined) {
    conditions.push("m.role IN (SELECT value FROM json_each(?))");
    params.push(JSON.stringify([...plan.roles]));
  }
  const bounds: string[] = [];
  if (plan.since !== undefined) {
    bounds.push("m.created_at >= ?");
    params.push(plan.since);
  }
  if (plan.until !== undefined) {
    bounds.push("m.created_at < ?");
    params.push(plan.until);
  }
  if (bounds.length > 0) conditions.push(`(NOT ${CANONICAL_TIME} OR (${bounds.join(" AND ")}))`);
  return { where: conditions.join(" AND "), params };
}
