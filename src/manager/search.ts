import { type ToolOutputLimits, toolOutputLimits } from "../context/output.js";
import type { SessionToolSet } from "../context/tools.js";
import type { SearchBranch, SearchResult, SessionMessage } from "../types.js";
import { sessionSearchTool } from "./search-tools.js";
import { type ManagerState, requireSession } from "./state.js";

/** Options of `SessionManager.search`. */
export interface ManagerSearchOptions {
  /** Most hits returned (default 20, at most 1,000). */
  limit?: number | undefined;
  /** Only this session's messages. */
  sessionId?: string | undefined;
  /** `"active"`: only messages on each session's active path; `"all"` (default): every branch. */
  branch?: SearchBranch | undefined;
}

/** `SessionManager.search`: the store's cross-session search (`NOT_FOUND` for an unregistered `sessionId`). */
export async function searchSessions<M extends SessionMessage>(
  state: ManagerState<M>,
  query: string,
  options: ManagerSearchOptions,
): Promise<SearchResult[]> {
  if (options.sessionId !== undefined) await requireSession(state, options.sessionId);
  return state.store.searchMessages(query, {
    ...(options.limit === undefined ? {} : { limit: options.limit }),
    ...(options.branch === undefined ? {} : { branch: options.branch }),
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
  });
}

/** `SessionManager.tools`: `{ session_search }` within the manager's tool-output limits (or `limits`). */
export function sessionTools<M extends SessionMessage>(
  state: ManagerState<M>,
  limits: Partial<ToolOutputLimits> | undefined,
  search: (query: string, options: { limit: number }) => Promise<SearchResult[]>,
): SessionToolSet {
  return {
    session_search: sessionSearchTool(
      { countSessions: () => state.store.registry.count(), search },
      toolOutputLimits(limits, state.templates.toolOutput),
    ),
  };
}
