import { type ToolOutputLimits, toolOutputLimits } from "../context/output.js";
import type { SessionToolSet } from "../context/tools.js";
import type { SessionMessage } from "../contract/message.js";
import type {
  SearchBranch,
  SearchHit,
  SearchItem,
  SearchMatch,
  StoreSearchOptions,
  WithFactHits,
} from "../contract/search.js";
import { parseInput } from "../schema/parse.js";
import { numberWhere } from "../schema/rules.js";
import { MAX_SEARCH_CONTEXT, searchPlan } from "../search/options.js";
import { type SearchToolOptions, sessionSearchTool } from "./search-tools.js";
import { type ManagerState, requireSession } from "./state.js";

/** Options of `SessionManager.search`. */
export interface ManagerSearchOptions {
  /** Most hits returned (default 20, at most 1,000). */
  limit?: number | undefined;
  /** Only this session's messages. */
  sessionId?: string | undefined;
  /** Only these sessions' messages (e.g. the sessions of one user); ids not registered match nothing. */
  sessionIds?: readonly string[] | undefined;
  /** `"active"`: only messages on each session's active path; `"all"` (default): every branch. */
  branch?: SearchBranch | undefined;
  /** Ranked recall (`"any"`, default) or every word required (`"all"`). */
  match?: SearchMatch | undefined;
  /** Only messages of this role, or of one of these roles. */
  role?: string | readonly string[] | undefined;
  /** Only messages stored at or after this time (ISO-8601 string or Date). */
  since?: string | Date | undefined;
  /** Only messages stored before this time (ISO-8601 string or Date). */
  until?: string | Date | undefined;
  /** Also return up to this many turns before and after each hit (0 to 10). */
  context?: number | undefined;
  /** Whether ranked recall also asks the store's vector channel (default true, with an embedder). */
  vectors?: boolean | undefined;
  /** Only the sessions registered with this owner (what `forOwner(owner).search` passes). */
  owner?: string | undefined;
  /** Whether ranked recall also asks the store's facts (default true; `"hits"` through WithFactHits, docs/FACTS.md). */
  facts?: boolean | undefined;
  /** Whether ranked recall reads the times the query names (default true; docs/RECALL.md#time). */
  times?: boolean | undefined;
}

const SEARCH_KEYS = [
  "limit",
  "sessionId",
  "sessionIds",
  "branch",
  "match",
  "role",
  "since",
  "until",
  "context",
  "vectors",
  "owner",
  "facts",
  "times",
] as const satisfies readonly (keyof ManagerSearchOptions & keyof StoreSearchOptions)[];

/**
 * `SessionManager.search`: the store's cross-session search (`NOT_FOUND` for an unregistered `sessionId`; ids of
 * `sessionIds` that are not registered match nothing).
 */
export async function searchSessions<M extends SessionMessage>(
  state: ManagerState<M>,
  query: string,
  options: ManagerSearchOptions | WithFactHits<ManagerSearchOptions>,
): Promise<SearchItem[]> {
  if (options.sessionId !== undefined) await requireSession(state, options.sessionId);
  // Only the options a search knows are passed on (an undefined one is left out, as if not given).
  const passed: StoreSearchOptions = {};
  for (const key of SEARCH_KEYS) {
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined) (passed as Record<string, unknown>)[key] = value;
  }
  if (passed.sessionIds !== undefined && passed.sessionIds !== null) {
    // Checked before the registry is asked, so a malformed set is INVALID_ARGUMENT, not a crash in the look-ups.
    const named = searchPlan(passed).sessionIds ?? new Set<string>();
    passed.sessionIds = await registered(state, named);
  }
  // `facts: "hits"` passes as it came (the built-in stores take it: WithFactHits), hence the widened types.
  return state.store.searchMessages(query, passed as StoreSearchOptions);
}

/**
 * The ids of `ids` the registry knows: the manager answers for its own sessions, as it does for `sessionId`; a
 * session written through a plain Session on the same store is no session of the manager's.
 */
async function registered<M extends SessionMessage>(
  state: ManagerState<M>,
  ids: ReadonlySet<string>,
): Promise<string[]> {
  const known = await Promise.all([...ids].map(async (id) => (await state.store.registry.get(id)) !== null));
  return [...ids].filter((_, i) => known[i]);
}

/** `tools()`'s `context`: messages around each hit, a whole number from 0 to MAX_SEARCH_CONTEXT. */
const toolContext = numberWhere(
  `tools() context must be a whole number from 0 to ${MAX_SEARCH_CONTEXT}`,
  (n) => Number.isInteger(n) && n >= 0 && n <= MAX_SEARCH_CONTEXT,
).optional();

/** `SessionManager.tools`: `{ session_search }` within the manager's tool-output limits (or `limits`). */
export function sessionTools<M extends SessionMessage>(
  state: ManagerState<M>,
  limits: Partial<ToolOutputLimits> | undefined,
  search: (query: string, options: { limit: number; context?: number }) => Promise<SearchHit[]>,
  options: SearchToolOptions = {},
): SessionToolSet {
  // Checked when the tools are made, not when the model calls them (a bad value is the app's error).
  parseInput(toolContext, options.context, { path: "context" });
  return {
    session_search: sessionSearchTool(
      { countSessions: () => state.store.registry.count(), search },
      toolOutputLimits(limits, state.templates.toolOutput),
      options,
    ),
  };
}
