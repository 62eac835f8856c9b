import { z } from "zod";
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

/** Formats hits as the reference does: `[<role>] <content>` joined by `\n---\n`; null when there are none. */
export function formatSessionHits(hits: readonly SearchResult[]): string | null {
  return hits.length === 0 ? null : hits.map((hit) => `[${hit.role}] ${hit.content}`).join("\n---\n");
}

/**
 * The read-only search block `withSearchableHistory(label)` adds to every managed session: `get()` says how many
 * sessions exist, `search()` runs the cross-session search.
 */
export function historyProvider(host: HistorySearchHost): SearchProvider {
  return {
    async get() {
      const n = await host.countSessions();
      return n === 0 ? null : `${n} session${n === 1 ? "" : "s"} available for search.`;
    },
    async search(query: string) {
      return formatSessionHits(await host.search(query, { limit: TOOL_LIMIT }));
    },
  };
}

/** The `session_search` tool; like every memory tool it never throws and reports failures as `Error: …`. */
export function sessionSearchTool(host: HistorySearchHost): SessionTool {
  return {
    description: "Search past conversations for relevant context. Searches across all sessions.",
    inputSchema: z.object({ query: z.string().describe("Search query") }),
    execute: async (input) => {
      try {
        const query = (input as { query?: unknown } | null)?.query;
        if (typeof query !== "string") return 'Error: invalid input: "query" must be a string';
        return formatSessionHits(await host.search(query, { limit: TOOL_LIMIT })) ?? "No results found.";
      } catch (error) {
        return `Error: ${errorMessage(error)}`;
      }
    },
  };
}
