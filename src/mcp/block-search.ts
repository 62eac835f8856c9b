/**
 * The context blocks `search_memory` finds beside messages, so what `write_block` writes a search can find. Blocks
 * have no search index: they are few (a handful per session) and matched in memory with the query language's
 * semantics (search/score.ts), read through the export stream (sealed ones opened) or, for one session, by key.
 */
import { blockOwner } from "../context/block-keys.js";
import { clipHit } from "../context/output.js";
import { hasContextStorage, hasRecords } from "../contract/context.js";
import { hasTransfer } from "../contract/transfer.js";
import { SessionError } from "../errors.js";
import { parseQuery, type QueryTerm } from "../search/query.js";
import { scoreText } from "../search/score.js";
import { textTerms } from "../search/text-terms.js";
import type { ToolContext } from "./tool.js";

/** Most block rows one store-wide search reads; past it the result says so and names the way to narrow it. */
export const MAX_SCANNED_BLOCKS = 5_000;

/** Blocks no model wrote: a session's frozen system prompt is the app's, and would match most queries. */
const PROMPT_LABEL = "_system_prompt";

/** One matching block: whose, under which label, and how well it matched (matched terms, then occurrences). */
export interface BlockHit {
  sessionId: string;
  label: string;
  content: string;
  matched: number;
  occurrences: number;
}

/**
 * What a block search found, whether it stopped at {@link MAX_SCANNED_BLOCKS} before reading every block, and the
 * line saying why it stopped early on a block it could not open (a sealed one, the server without its owner's key).
 */
export interface BlockSearch {
  hits: BlockHit[];
  capped: boolean;
  unreadable?: string;
}

function score(terms: QueryTerm[], content: string, all: boolean): { matched: number; occurrences: number } {
  const words = textTerms(content);
  if (all) {
    const occurrences = scoreText(terms, words);
    return { matched: occurrences > 0 ? terms.length : 0, occurrences };
  }
  let matched = 0;
  let occurrences = 0;
  for (const term of terms) {
    const n = scoreText([term], words);
    if (n > 0) matched++;
    occurrences += n;
  }
  return { matched, occurrences };
}

/** The session blocks (key, content) within the scope: one session's by key, or every reachable session's. */
async function* blocksInScope(
  context: ToolContext,
  session: string | undefined,
  stop: () => void,
): AsyncGenerator<{ sessionId: string; label: string; content: string }> {
  const { store, scope } = context;
  if (!hasContextStorage(store)) return;
  if (session !== undefined) {
    for (const key of await scope.blockKeys(session)) {
      const content = await store.blocks.getBlock(key);
      if (content !== null) yield { sessionId: session, label: labelOf(key, session), content };
    }
    return;
  }
  if (!hasTransfer(store)) return;
  const recorded = hasRecords(store.blocks);
  // A store without records attributes keys by the suffix rule, and only unscoped (as SessionScope.blockKeys).
  if (!recorded && scope.owner !== undefined) return;
  const reachable = new Map<string, boolean>();
  const inReach = async (id: string): Promise<boolean> => {
    const known = reachable.get(id) ?? (await scope.reachable(id));
    reachable.set(id, known);
    return known;
  };
  let read = 0;
  for await (const row of store.transfer.exportRows()) {
    if (row.kind !== "block") break; // blocks come first; the first entry ends them
    if (++read > MAX_SCANNED_BLOCKS) return stop();
    const owner = recorded
      ? row.sessionId === undefined
        ? null
        : { sessionId: row.sessionId, label: labelOf(row.key, row.sessionId) }
      : await blockOwner(row.key, inReach);
    if (owner && (await inReach(owner.sessionId))) yield { ...owner, content: row.content };
  }
}

function labelOf(key: string, sessionId: string): string {
  const suffix = `_${sessionId}`;
  return key.endsWith(suffix) && key.length > suffix.length ? key.slice(0, -suffix.length) : key;
}

/**
 * The session blocks matching `query` within the server's scope (of `session` only, when given), best first, at
 * most `limit`; `match: "all"` needs every term. The frozen system prompt is left out.
 */
export async function searchBlocks(
  context: ToolContext,
  query: string,
  options: { session?: string | undefined; match?: "any" | "all" | undefined; limit: number },
): Promise<BlockSearch> {
  const terms = parseQuery(query);
  const result: BlockSearch = { hits: [], capped: false };
  if (terms.length === 0) return result;
  const all = options.match === "all";
  const stop = () => {
    result.capped = true;
  };
  try {
    for await (const block of blocksInScope(context, options.session, stop)) {
      if (block.label === PROMPT_LABEL) continue;
      const { matched, occurrences } = score(terms, block.content, all);
      if (matched > 0) result.hits.push({ ...block, matched, occurrences });
    }
  } catch (error) {
    // A sealed block the server cannot open ends the block search, said in the result; the message hits stand.
    if (!(error instanceof SessionError && error.code === "DECRYPT_FAILED")) throw error;
    result.unreadable = `[blocks: the search stopped at a block this server cannot open: ${error.message}]`;
  }
  result.hits.sort((a, b) => b.matched - a.matched || b.occurrences - a.occurrences);
  result.hits.length = Math.min(result.hits.length, options.limit);
  return result;
}

/** One block hit as search_memory prints it: where it is (for read_block), then its clipped text. */
export function formatBlockHit(hit: BlockHit, query: string, context: ToolContext): string {
  const where = `block label=${JSON.stringify(hit.label)} session=${JSON.stringify(hit.sessionId)} characters=${hit.content.length}`;
  return `${where}\n${clipHit(hit.content, query, context.limits.maxHitChars)}`;
}

/** The line a capped block search ends with. */
export const CAPPED_NOTE = `[blocks: only the first ${MAX_SCANNED_BLOCKS} stored blocks were searched; name a session to search all of its blocks]`;
