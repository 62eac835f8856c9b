/**
 * A search's role and time filters as a condition inside the index read, so the newest matches a search takes
 * can be the filter's own: filtering only after the newest matches were taken found nothing for a time range
 * older than them. The condition is never stricter than passesFilters (search/options.ts), which still decides
 * every hit: a time stored as toISOString writes it (24 ASCII characters, a four-digit year) is compared here
 * exactly as JavaScript compares it with a bound of a four-digit year, and any other stored form (an adopted
 * reference row's `YYYY-MM-DD HH:MM:SS`, an extended year) or bound passes the condition and is judged in
 * JavaScript. The same condition can keep sessions to their active paths (an active-branch search whose window
 * held too few of their matches) and a search to the session a lookup keeps to.
 */
import { hasFilters, type SearchFilters } from "../../search/options.js";
import type { SqlValue } from "../engines/sqlite/driver.js";
import { ACTIVE_PATHS_SEQS } from "../engines/sqlite/tree.js";

/** A condition on the messages `m` and its parameters, in order. */
export interface FilterSql {
  where: string;
  params: SqlValue[];
}

// The form passesFilters compares as a string, without parsing it again.
const CANONICAL_TIME = `m.created_at GLOB
  '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'`;

/** Where else a filtered read keeps to: the session a lookup keeps to (state.ts), sessions' active paths. */
export interface FilterScope {
  sessionNum?: number | undefined;
  /**
   * Sessions (numbers) whose messages count only on their active path; other sessions' all pass. Each path is
   * read once per statement, depth rows.
   */
  activePaths?: readonly number[] | undefined;
}

/**
 * The plan's role and time filters on the messages `m`, with what `scope` adds; undefined when there is nothing to
 * keep to in SQL (no filter, or only bounds of an extended year, and no paths).
 */
export function filterSql(
  plan: SearchFilters,
  { sessionNum, activePaths }: FilterScope = {},
): FilterSql | undefined {
  if (!hasFilters(plan) && activePaths === undefined) return undefined;
  const conditions: string[] = [];
  const params: SqlValue[] = [];
  if (activePaths !== undefined) {
    const nums = JSON.stringify(activePaths);
    conditions.push(
      `(m.session_num NOT IN (SELECT value FROM json_each(?)) OR m.seq IN (${ACTIVE_PATHS_SEQS}))`,
    );
    params.push(nums, nums);
  }
  if (plan.roles !== undefined) {
    conditions.push("m.role IN (SELECT value FROM json_each(?))");
    params.push(JSON.stringify([...plan.roles]));
  }
  // A bound of an extended year (±YYYYYY) does not order as a string with the stored times: JavaScript decides it.
  const bounds: string[] = [];
  if (plan.since !== undefined && isFourDigitYear(plan.since)) {
    bounds.push("m.created_at >= ?");
    params.push(plan.since);
  }
  if (plan.until !== undefined && isFourDigitYear(plan.until)) {
    bounds.push("m.created_at < ?");
    params.push(plan.until);
  }
  if (bounds.length > 0) conditions.push(`(NOT ${CANONICAL_TIME} OR (${bounds.join(" AND ")}))`);
  // Only bounds JavaScript must decide (see above): nothing to keep to here, the session included.
  if (conditions.length === 0) return undefined;
  if (sessionNum === undefined) return { where: conditions.join(" AND "), params };
  return { where: ["m.session_num = ?", ...conditions].join(" AND "), params: [sessionNum, ...params] };
}

const isFourDigitYear = (time: string) => time[0] !== "+" && time[0] !== "-";

/** The condition of a session a lookup keeps to (state.ts) alone, without filters. */
export function sessionFilter(sessionNum: number): FilterSql {
  return { where: "m.session_num = ?", params: [sessionNum] };
}
