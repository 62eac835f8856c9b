import { z } from "zod";
import {
  clipHit,
  clipOutput,
  DEFAULT_TOOL_OUTPUT_LIMITS,
  joinHits,
  type ToolOutputLimits,
} from "../context/output.js";
import type { SessionTool } from "../context/tools.js";
import type { SearchProvider } from "../context/types.js";
import { errorMessage } from "../errors.js";
import type { SearchResult } from "../types.js";

/** What the model-facing search needs from the manager. */
export interface HistorySearchHost {
  /** Number of registered sessions. */
  countSessions(): Promise<number>;
  search(query: string, options: { limit: number }): Promise<SearchResult[]>;
}

/** Hits the model can search at once, as in the reference. */
const TOOL_LIMIT = 10;

/**
 * Formats hits as the reference does: `[<role>] <content>` joined by `\n---\n`; null when there are none. Each
 * hit and the whole stay within `limits` (a long hit shows the part around its first match of `query`).
 */
export function formatSessionHits(
  hits: readonly SearchResult[],
  query = "",
  limits: ToolOutputLimits = DEFAULT_TOOL_OUTPUT_LIMITS,
): string | null {
  if (hits.length === 0) return null;
  const formatted = hits.map((hit) => `[${hit.role}] ${clipHit(hit.content, query, limits.maxHitChars)}`);
  return joinHits(formatted, "\n---\n", limits.maxOutputChars);
}

/**
 * The read-only search block `withSearchableHistory(label)` adds to every managed session: `get()` says how many
 * sessions exist, `search()` runs the cross-session search within the calling tool's output limits.
 */
export function historyProvider(host: HistorySearchHost): SearchProvider {
  return {
    async get() {
      const n = await host.countSessions();
      return n === 0 ? null : `${n} session${n === 1 ? "" : "s"} available for search.`;
    },
    async search(query: string, limits?: ToolOutputLimits) {
      return formatSessionHits(await host.search(query, { limit: TOOL_LIMIT }), query, limits);
    },
  };
}

/**
 * The `session_search` tool; like every memory tool it never throws and reports failures as `Error: …`, and its
 * result stays within `limits`.
 */
export function sessionSearchTool(
  host: HistorySearchHost,
  limits: ToolOutputLimits = DEFAULT_TOOL_OUTPUT_LIMITS,
): SessionTool {
  return {
    description: "Search past conversations for relevant context. Searches across all sessions.",
    inputSchema: z.object({ query: z.string().describe("Search query") }),
    execute: async (input) => {
      try {
        const query = (input as { query?: unknown } | null)?.query;
        if (typeof query !== "string") return 'Error: invalid input: "query" must be a string';
        const hits = await host.search(query, { limit: TOOL_LIMIT });
        return formatSessionHits(hits, query, limits) ?? "No results found.";
      } catch (error) {
        return clipOutput(`Error: ${errorMessage(error)}`, limits.maxOutputChars);
      }
    },
  };
}
