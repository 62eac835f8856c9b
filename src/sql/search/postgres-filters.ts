/**
 * A search's filters as SQL parameters. Postgres refuses text holding U+0000 (and a lone surrogate is encoded as
 * U+FFFD, another string), so a role or session id no row can hold is left out here rather than sent, and it reads
 * neither a six-digit year nor a time before 4714 BC: each failed the whole search with a STORAGE error where every
 * other backend answered.
 */
import { isStorableId } from "../../message/ids.js";
import type { SearchFilters, SearchPlan } from "../../search/options.js";
import { timestampParam } from "../engines/postgres/timestamp.js";

/** The parameters of the filters (null: no filter), or null when no stored message can pass them. */
export interface FilterParams {
  roles: string[] | null;
  sessionIds: string[] | null;
  /** timestamptz literals (see timestampParam). */
  since: string | null;
  until: string | null;
}

// The earliest time Postgres holds (24 November 4714 BC, astronomical year -4713): a bound before it is before every
// stored message.
const EARLIEST = Date.UTC(-4713, 10, 24);

/** The plan's filters as parameters; null when no stored message can pass them. */
export function filterParams(plan: SearchFilters & Pick<SearchPlan, "sessionIds">): FilterParams | null {
  const roles = plan.roles === undefined ? null : [...plan.roles].filter(isStorableId);
  const sessionIds = plan.sessionIds === undefined ? null : [...plan.sessionIds].filter(isStorableId);
  if (roles?.length === 0 || sessionIds?.length === 0) return null;
  // The bounds are toISOString's: an extended year (±YYYYYY) is written as Postgres reads it.
  const early = (time: string) => Date.parse(time) < EARLIEST;
  if (plan.until !== undefined && early(plan.until)) return null;
  const since =
    plan.since === undefined || early(plan.since) ? null : timestampParam(plan.since, "since", "since");
  const until = plan.until === undefined ? null : timestampParam(plan.until, "until", "until");
  return { roles, sessionIds, since, until };
}
