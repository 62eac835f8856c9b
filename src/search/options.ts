/**
 * The options of a search, checked once and normalised for every backend: a bad option is `INVALID_ARGUMENT`
 * before any work is done, never a silently ignored filter.
 */

import { z } from "zod";
import type { SearchMatch, StoreSearchOptions, WithFactHits } from "../contract/search.js";
import { parseInput } from "../schema/parse.js";
import { numberWhere } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";
import { DEFAULT_SEARCH_LIMIT, searchLimitSchema } from "../store/limits.js";
import { ownerId } from "../store/owner.js";

/** Most turns a hit may bring on each side: context is for reading around a hit, not for paging history. */
export const MAX_SEARCH_CONTEXT = 10;
/** Most sessions one search may name in `sessionIds`. */
export const MAX_SEARCH_SESSIONS = 1000;

/** A search's options as the backends use them. */
export interface SearchPlan {
  limit: number;
  activeOnly: boolean;
  match: SearchMatch;
  /** Roles a hit may have; undefined: any. */
  roles: ReadonlySet<string> | undefined;
  /** ISO-8601 bounds on a hit's `createdAt` (since inclusive, until exclusive). */
  since: string | undefined;
  until: string | undefined;
  context: number;
  sessionId: string | undefined;
  /** Sessions a hit may belong to; undefined: any. */
  sessionIds: ReadonlySet<string> | undefined;
  /** Whether ranked recall also asks the store's vector channel (when it has an embedder). */
  vectors: boolean;
  /**
   * The owner whose sessions a hit may belong to; undefined: any. Kept to inside each backend's index (the owner's
   * token beside the session's, store/owner.ts ownerHash) and by the vector channel's read, never as a list of the
   * owner's sessions, so its cost follows the owner's matches, not how many sessions the owner has.
   */
  owner: string | undefined;
  /** Whether ranked recall fuses the store's facts (`false`: not), and returns them as hits too (`"hits"`). */
  facts: boolean | "hits";
  /** Whether ranked recall reads the times the query names (date-terms.ts); `false`: its words alone. */
  times: boolean;
  /** Whether ranked recall takes the named author's turns first within their tier (authors.ts; asked with `authors: true`). */
  authors: boolean;
}

/** A search's role and time filters, as the plan holds them: what passesFilters decides a hit by. */
export type SearchFilters = Pick<SearchPlan, "roles" | "since" | "until">;

const isRoles = (role: unknown): boolean => {
  const roles = typeof role === "string" ? [role] : Array.isArray(role) ? role : [];
  return roles.length > 0 && roles.every((r) => typeof r === "string" && r !== "");
};

const timeOf = (value: unknown): number =>
  value instanceof Date ? value.getTime() : typeof value === "string" ? Date.parse(value) : Number.NaN;

const time = (caller: string, name: string) =>
  z
    .custom<string | Date>(
      (value) => Number.isFinite(timeOf(value)),
      rule(`${caller} ${name} must be an ISO-8601 time or a Date`, "format"),
    )
    .nullish();

/** The schemas of the role and time filters, their messages begun by `caller` ("Search", "nearest():"). */
export const filterShape = (caller: string) => ({
  role: z
    .custom<string | string[]>(
      isRoles,
      rule(`${caller} role must be a non-empty string or a non-empty array of them`, "type"),
    )
    .nullish(),
  since: time(caller, "since"),
  until: time(caller, "until"),
});

const sessionIdsRule = rule(
  `Search sessionIds must be an array of at most ${MAX_SEARCH_SESSIONS} session ids`,
);

// Anything but a string would match no session, silently; null too, unlike other options' null: read from an
// empty column, searching every session instead would answer other tenants' messages (the manager refuses it too).
const searchSession = z
  .string(rule("Search sessionId must be a string (leave it out to search every session)"))
  .optional();

// null is "none" for every option but sessionId and branch.
const planSchema = z.object(
  {
    limit: searchLimitSchema.nullish(),
    branch: z.enum(["active", "all"], rule('Search branch must be "active" or "all"')).optional(),
    match: z.enum(["any", "all"], rule('Search match must be "any" or "all"')).nullish(),
    ...filterShape("Search"),
    context: numberWhere(
      `Search context must be a whole number from 0 to ${MAX_SEARCH_CONTEXT}`,
      (n) => Number.isInteger(n) && n >= 0 && n <= MAX_SEARCH_CONTEXT,
    ).nullish(),
    sessionId: searchSession,
    sessionIds: z
      .array(z.string(sessionIdsRule), sessionIdsRule)
      .max(MAX_SEARCH_SESSIONS, sessionIdsRule)
      .nullish(),
    vectors: z.boolean(rule("Search vectors must be true or false")).nullish(),
    owner: ownerId("Search owner").nullish(),
    facts: z
      .union([z.boolean(), z.literal("hits")], rule('Search facts must be true, false or "hits"'))
      .nullish(),
    times: z.boolean(rule("Search times must be true or false")).nullish(),
    authors: z.boolean(rule("Search authors must be true or false")).nullish(),
  },
  rule("Search options must be an object"),
);

/** Validates and normalises search options (`INVALID_ARGUMENT` for anything malformed). */
export function searchPlan(
  options: StoreSearchOptions | WithFactHits<StoreSearchOptions> | null | undefined,
): SearchPlan {
  const o = parseInput(planSchema, options ?? {});
  return {
    limit: o.limit ?? DEFAULT_SEARCH_LIMIT,
    activeOnly: o.branch === "active",
    match: o.match ?? "any",
    ...filtersOf(o),
    context: o.context ?? 0,
    sessionId: o.sessionId,
    sessionIds: o.sessionIds === undefined || o.sessionIds === null ? undefined : new Set(o.sessionIds),
    vectors: o.vectors ?? true,
    owner: o.owner ?? undefined,
    facts: o.facts ?? true,
    times: o.times ?? true,
    authors: o.authors ?? false,
  };
}

type Filters = z.output<z.ZodObject<ReturnType<typeof filterShape>>>;

/** A search's (or nearest()'s) `role`, `since` and `until`, parsed with {@link filterShape}, as the plan holds them. */
export function filtersOf({ role, since, until }: Filters): SearchFilters {
  return {
    roles:
      role === undefined || role === null ? undefined : new Set(typeof role === "string" ? [role] : role),
    since: instant(since),
    until: instant(until),
  };
}

function instant(value: string | Date | null | undefined): string | undefined {
  return value === undefined || value === null ? undefined : new Date(timeOf(value)).toISOString();
}

/** True when a hit of this role and time passes the plan's role and time filters. */
export function passesFilters(plan: SearchFilters, role: string, createdAt: string | undefined): boolean {
  if (plan.roles !== undefined && !plan.roles.has(role)) return false;
  if (plan.since === undefined && plan.until === undefined) return true;
  if (createdAt === undefined) return false;
  const at = normalisedInstant(createdAt);
  if (plan.since !== undefined && compareInstants(at, plan.since) < 0) return false;
  if (plan.until !== undefined && compareInstants(at, plan.until) >= 0) return false;
  return true;
}

// toISOString's times of the years 0–9999 order as strings; an extended year (±YYYYYY) does not ("+010000" sorts
// before "2026"), so those are compared as instants.
function compareInstants(a: string, b: string): number {
  if (a[0] === "+" || a[0] === "-" || b[0] === "+" || b[0] === "-") {
    const x = Date.parse(a);
    const y = Date.parse(b);
    if (Number.isFinite(x) && Number.isFinite(y)) return x - y;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** True when the plan filters hits by role or time. */
export function hasFilters(plan: SearchFilters): boolean {
  return plan.roles !== undefined || plan.since !== undefined || plan.until !== undefined;
}

// Stored times are ISO-8601 already (toISOString); anything else is read as a time the same way as the bounds.
function normalisedInstant(value: string): string {
  if (value.length === 24 && value.endsWith("Z")) return value;
  const time = Date.parse(value);
  return Number.isFinite(time) ? new Date(time).toISOString() : value;
}

/** True when the plan's sessions leave nothing to search: an empty set, or one session the set leaves out. */
export function outsideSessions(plan: SearchPlan): boolean {
  if (plan.sessionIds === undefined) return false;
  return plan.sessionIds.size === 0 || (plan.sessionId !== undefined && !plan.sessionIds.has(plan.sessionId));
}

/** True when a hit of this role, time and session passes every filter of the plan. */
export function acceptsHit(
  plan: SearchPlan,
  role: string,
  createdAt: string | undefined,
  sessionId: string,
): boolean {
  if (plan.sessionIds !== undefined && !plan.sessionIds.has(sessionId)) return false;
  return passesFilters(plan, role, createdAt);
}
