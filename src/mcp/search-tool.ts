import { z } from "zod";
import { clipHit, joinHits } from "../context/output.js";
import { hasFactStore } from "../contract/facts.js";
import type {
  FactSearchHit,
  SearchContextTurn,
  SearchHit,
  SearchItem,
  StoreSearchOptions,
  WithFactHits,
} from "../contract/search.js";
import { MAX_SEARCH_CONTEXT } from "../search/options.js";
import { type BlockSearch, CAPPED_NOTE, formatBlockHit, searchBlocks } from "./block-search.js";
import { factBlock } from "./fact-tools.js";
import type { McpTool, ToolContext } from "./tool.js";

/** Most hits one `search_memory` call returns: each may be long, and the whole result is bounded anyway. */
export const MAX_MCP_HITS = 50;

const schema = z.object({
  query: z.string().min(1).max(2000).describe("What to look for, as a question or keywords"),
  session: z.string().min(1).optional().describe("Only this session's messages"),
  role: z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1).max(8)])
    .optional()
    .describe('Only messages of this role (or these roles), e.g. "user" or "assistant"'),
  since: z.string().optional().describe("Only messages stored at or after this ISO-8601 time"),
  until: z.string().optional().describe("Only messages stored before this ISO-8601 time"),
  branch: z
    .enum(["active", "all"])
    .optional()
    .describe('"active": only each session\'s current branch; "all" (default): also abandoned branches'),
  match: z
    .enum(["any", "all"])
    .optional()
    .describe('"any" (default): ranked recall, messages matching more words first; "all": every word needed'),
  limit: z.number().int().min(1).max(MAX_MCP_HITS).optional().describe("Most hits (default 10)"),
  facts: z
    .boolean()
    .optional()
    .describe(
      "Also return the learned facts that rank among the messages, each naming the messages it came from",
    ),
  context: z
    .number()
    .int()
    .min(0)
    .max(MAX_SEARCH_CONTEXT)
    .optional()
    .describe("Also show this many turns before and after each hit (default 0)"),
});

function turnLine(turn: SearchContextTurn, query: string, context: ToolContext): string {
  return `    ${turn.role}: ${clipHit(turn.content, query, context.limits.maxHitChars)}`;
}

/** One hit: a header naming where it is (for `read_turns_around`), then its text and any context turns. */
function formatHit(hit: SearchHit, query: string, context: ToolContext): string {
  const where = [
    `#${hit.rank}`,
    `session=${JSON.stringify(hit.sessionId)}`,
    `message=${JSON.stringify(hit.id)}`,
    `role=${hit.role}`,
    ...(hit.createdAt ? [`stored=${hit.createdAt}`] : []),
    ...(hit.onActivePath === false ? ["branch=abandoned"] : []),
    ...(hit.compactedBy === undefined ? [] : [`compacted-by=${hit.compactedBy}`]),
  ].join(" ");
  const before = hit.context?.before.map((turn) => turnLine(turn, query, context)) ?? [];
  const after = hit.context?.after.map((turn) => turnLine(turn, query, context)) ?? [];
  const text = clipHit(hit.content, query, context.limits.maxHitChars);
  return [where, ...before, hit.context ? `  > ${hit.role}: ${text}` : text, ...after].join("\n");
}

/** A fact that ranked: its place, then the fact as list_facts shows it (its sources are the turns to read). */
function formatFact(hit: FactSearchHit, context: ToolContext): string {
  return factBlock(hit, context.limits.maxHitChars, [`#${hit.rank}`]);
}

/** `search_memory`: the store's ranked recall across the reachable sessions, with its filters. */
export const searchTool: McpTool<typeof schema> = {
  name: "search_memory",
  title: "Search past conversations",
  description:
    "Ranked recall across stored conversations: messages matching more of the query's words (and word forms: " +
    "deploy, deploying, deployment) come first. Each hit names its session and message id; read the turns around " +
    "one with read_turns_around, or a whole session with read_session. Where facts were learned from the " +
    "conversations, a fact matching the query lifts the messages it came from; facts: true also lists those facts. " +
    "Context blocks (what write_block stores) matching the query are listed after the messages, each naming its " +
    "label and session for read_block; a search filtered by role, since or until leaves blocks out.",
  schema,
  writes: false,
  async run(args, context) {
    const { store, scope } = context;
    if (args.session !== undefined) await scope.require(args.session);
    const limit = args.limit ?? 10;
    const options: StoreSearchOptions = { limit };
    if (scope.owner !== undefined) options.owner = scope.owner;
    if (args.session !== undefined) options.sessionId = args.session;
    if (args.role !== undefined) options.role = args.role;
    if (args.since !== undefined) options.since = args.since;
    if (args.until !== undefined) options.until = args.until;
    if (args.branch !== undefined) options.branch = args.branch;
    if (args.match !== undefined) options.match = args.match;
    if (args.context !== undefined && args.context > 0) options.context = args.context;
    // `facts: "hits"` only to a store with facts, passed as it is (the built-in stores take it: WithFactHits); the
    // SessionStore interface keeps its one signature, hence the widened types.
    if (args.facts === true && hasFactStore(store)) {
      (options as unknown as WithFactHits<StoreSearchOptions>).facts = "hits";
    }
    const hits: SearchItem[] = await store.searchMessages(args.query, options);
    // Blocks carry no role or time: a search filtered by them is about messages only.
    const withBlocks = args.role === undefined && args.since === undefined && args.until === undefined;
    const blocks: BlockSearch = withBlocks
      ? await searchBlocks(context, args.query, { session: args.session, match: args.match, limit })
      : { hits: [], capped: false };
    const notes = [
      ...(blocks.capped ? [CAPPED_NOTE] : []),
      ...(blocks.unreadable ? [blocks.unreadable] : []),
    ];
    const tail = notes.length > 0 ? `\n${notes.join("\n")}` : "";
    if (hits.length === 0 && blocks.hits.length === 0) return `No results found.${tail}`;
    const formatted = [
      ...hits.map((hit) => ("kind" in hit ? formatFact(hit, context) : formatHit(hit, args.query, context))),
      ...blocks.hits.map((hit) => formatBlockHit(hit, args.query, context)),
    ];
    return `${joinHits(formatted, "\n---\n", context.limits.maxOutputChars - tail.length)}${tail}`;
  },
};
