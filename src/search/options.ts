/**
 * The options of a search, checked once and normalised for every backend: a bad option is `INVALID_ARGUMENT`
 * before any work is done, never a silently ignored filter.
 */

import type { SearchMatch, SearchOptions, StoreSearchOptions } from "../contract/search.js";
import { SessionError } from "../errors.js";
import { describe } from "../message/describe.js";
import { searchBranch, searchLimit } from "../store/limits.js";
import { optionalOwner } from "../store/owner.js";

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
   * token beside the session's, search/owner-token.ts) and by the vector channel's read, never as a list of the
   * owner's sessions, so its cost follows the owner's matches, not how many sessions the owner has.
   */
  owner: string | undefined;
}

/** A search's role and time filters, as the plan holds them: what passesFilters decides a hit by. */
export type SearchFilters = Pick<SearchPlan, "roles" | "since" | "until">;

/** Validates and normalises search options (`INVALID_ARGUMENT` for anything malformed). */
export function searchPlan(options: StoreSearchOptions | null | undefined): SearchPlan {
  const o = options ?? {};
  return {
    limit: searchLimit(o.limit),
    activeOnly: searchBranch(o.branch) === "active",
    match: searchMatch(o.match),
    ...searchFilters(o),
    context: contextTurns(o.context),
    sessionId: searchSession(o.sessionId),
    sessionIds: sessionSet(o.sessionIds),
    vectors: vectorsWanted(o.vectors),
    owner: optionalOwner(o.owner, "Search owner"),
  };
}

/**
 * Validates and normalises the `role`, `since` and `until` options of a search (or of another call that takes
 * them, named by `caller` in the error: `INVALID_ARGUMENT`).
 */
export function searchFilters(
  options: Pick<SearchOptions, "role" | "since" | "until">,
  caller = "Search",
): SearchFilters {
  return {
    roles: roleSet(options.role, caller),
    since: instant(options.since, caller, "since"),
    until: instant(options.until, caller, "until"),
  };
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

function searchMatch(match: unknown): SearchMatch {
  if (match === undefined || match === null || match === "any") return "any";
  if (match === "all") return "all";
  throw new SessionError("INVALID_ARGUMENT", `Search match must be "any" or "all", got ${describe(match)}`, {
    issues: [{ path: "match", rule: "one_of" }],
  });
}

function roleSet(role: unknown, caller: string): ReadonlySet<string> | undefined {
  if (role === undefined || role === null) return undefined;
  const roles = typeof role === "string" ? [role] : Array.isArray(role) ? role : undefined;
  if (roles === undefined || roles.length === 0 || roles.some((r) => typeof r !== "string" || r === "")) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${caller} role must be a non-empty string or a non-empty array of them, got ${describe(role)}`,
      { issues: [{ path: "role", rule: "type" }] },
    );
  }
  return new Set(roles as string[]);
}

function instant(value: unknown, caller: string, name: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  const time =
    value instanceof Date ? value.getTime() : typeof value === "string" ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(time)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${caller} ${name} must be an ISO-8601 time or a Date, got ${describe(value)}`,
      { issues: [{ path: name, rule: "format" }] },
    );
  }
  return new Date(time).toISOString();
}

// Stored times are ISO-8601 already (toISOString); anything else is read as a time the same way as the bounds.
function normalisedInstant(value: string): string {
  if (value.length === 24 && value.endsWith("Z")) return value;
  const time = Date.parse(value);
  return Number.isFinite(time) ? new Date(time).toISOString() : value;
}

function contextTurns(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_SEARCH_CONTEXT) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `Search context must be a whole number from 0 to ${MAX_SEARCH_CONTEXT}, got ${describe(value)}`,
      { issues: [{ path: "context", rule: typeof value === "number" ? "range" : "type" }] },
    );
  }
  return value;
}

// Anything but a string would match no session, silently; null too, unlike other options' null: read from an
// empty column, searching every session instead would answer other tenants' messages (the manager refuses it too).
function searchSession(id: unknown): string | undefined {
  if (id === undefined) return undefined;
  if (typeof id !== "string") {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `Search sessionId must be a string (leave it out to search every session), got ${describe(id)}`,
      { issues: [{ path: "sessionId", rule: "type" }] },
    );
  }
  return id;
}

function sessionSet(ids: unknown): ReadonlySet<string> | undefined {
  if (ids === undefined || ids === null) return undefined;
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== "string") || ids.length > MAX_SEARCH_SESSIONS) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `Search sessionIds must be an array of at most ${MAX_SEARCH_SESSIONS} session ids, got ${describe(ids)}`,
      {
        issues: [
          {
            path: "sessionIds",
            rule: Array.isArray(ids) && ids.length > MAX_SEARCH_SESSIONS ? "too_long" : "type",
          },
        ],
      },
    );
  }
  return new Set(ids as string[]);
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

function vectorsWanted(value: unknown): boolean {
  if (value === undefined || value === null || value === true) return true;
  if (value === false) return false;
  throw new SessionError("INVALID_ARGUMENT", `Search vectors must be true or false, got ${describe(value)}`, {
    issues: [{ path: "vectors", rule: "type" }],
  });
}
