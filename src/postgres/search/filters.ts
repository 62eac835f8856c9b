/**
 * A search's role and session-set filters as SQL parameters. Postgres refuses text holding U+0000 (and a lone
 * surrogate is encoded as U+FFFD, another string), so a role or session id no row can hold is left out here rather
 * than sent: sending it failed the whole search with a STORAGE error where every other backend found nothing.
 */
import { isStorableId } from "../../message/ids.js";
import type { SearchPlan } from "../../search/options.js";

/** The parameters of the filters (null: no filter), or null when no stored message can pass them. */
export interface FilterParams {
  roles: string[] | null;
  sessionIds: string[] | null;
}

/** The plan's role and session-set filters as parameters; null when no stored message can pass them. */
export function filterParams(plan: SearchPlan): FilterParams | null {
  const roles = plan.roles === undefined ? null : [...plan.roles].filter(isStorableId);
  const sessionIds = plan.sessionIds === undefined ? null : [...plan.sessionIds].filter(isStorableId);
  if (roles?.length === 0 || sessionIds?.length === 0) return null;
  return { roles, sessionIds };
}
