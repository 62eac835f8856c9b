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
import type { SearchHit, SearchResult } from "../contract/search.js";
import { errorMessage } from "../errors.js";
import { type BlockTurn, hitBlocks } from "./hit-blocks.js";

/** What the model-facing search needs from the manager. */
export interface HistorySearchHost {
  /** Number of registered sessions. */
  countSessions(): Promise<number>;
  search(query: string, options: { limit: number; context?: number }): Promise<SearchHit[]>;
}

/** Richer output of the `session_search` tool than the reference's (which is the default). */
export interface SearchToolOptions {
  /**
   * Show up to this many turns before and after each hit (0 to 10; default 0, the reference's format): a
   * conversation's answer is often the turn after the one that matched. Hits inside a compacted range are marked.
   */
  context?: number | undefined;
}

/** Hits the model can search at once, as in the reference. */
export const TOOL_LIMIT = 10;

/**
 * Formats hits as the reference does: `[<role>] <content>` joined by `\n---\n`; null when there are none. Each
 * hit and the whole stay within `limits` (a long hit shows the part around its first match of `query`). Hits with
 * context are shown in blocks of turns in conversation order, each hit marked `> ` and every turn shown once: hits
 * whose turns overlap share a block (hit-blocks.ts).
 */
export function formatSessionHits(
  hits: readonly SearchResult[],
  query = "",
  limits: ToolOutputLimits = DEFAULT_TOOL_OUTPUT_LIMITS,
): string | null {
  if (hits.length === 0) return null;
  const line = ({ role, content, hit }: BlockTurn) => {
    const text = `[${role}] ${clipHit(content, query, limits.maxHitChars)}`;
    if (hit === undefined) return `  ${text}`;
    // Without context, the reference's string: richer output (the mark, the covering summary) is the option's.
    if (hit.context === undefined) return text;
    return `> ${text}${hit.compactedBy === undefined ? "" : ` (replaced by summary ${hit.compactedBy})`}`;
  };
  const formatted = hitBlocks(hits).map((block) => block.turns.map(line).join("\n"));
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
  options: SearchToolOptions = {},
): SessionTool {
  const context = options.context ?? 0;
  return {
    description: "Search past conversations for relevant context. Searches across all sessions.",
    inputSchema: z.object({ query: z.string().describe("Search query") }),
    execute: async (input) => {
      try {
        const query = (input as { query?: unknown } | null)?.query;
        if (typeof query !== "string") return 'Error: invalid input: "query" must be a string';
        const hits = await host.search(
          query,
          context > 0 ? { limit: TOOL_LIMIT, context } : { limit: TOOL_LIMIT },
        );
        return formatSessionHits(hits, query, limits) ?? "No results found.";
      } catch (error) {
        return clipOutput(`Error: ${errorMessage(error)}`, limits.maxOutputChars);
      }
    },
  };
}
