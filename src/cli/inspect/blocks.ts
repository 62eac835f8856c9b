import { blockOwner } from "../../context/block-keys.js";
import { hasContextStorage } from "../../contract/context.js";
import { hasSessionRegistry } from "../../contract/registry.js";
import type { SessionStore } from "../../contract/store.js";
import { hasTransfer } from "../../contract/transfer.js";
import { estimateStringTokens } from "../../message/tokens.js";
import { pendingReminder } from "./reminder.js";

/** The label under which a Session stores its frozen system prompt (`_system_prompt_<sessionId>`). */
export const PROMPT_LABEL = "_system_prompt";

/** One stored context block. */
export interface BlockView {
  label: string;
  key: string;
  content: string;
  /** The library's token estimate of the content. */
  tokens: number;
  /**
   * A session block only: its section as a reminder carries it while the frozen prompt holds an older value (a
   * `whenChanged: "remind"` block sends it after the cached prefix until `refreshSystemPrompt()`); null otherwise.
   */
  reminder?: string | null;
}

/** The stored context of one session: its auto-wired blocks and its frozen prompt. */
export interface SessionBlocks {
  sessionId: string;
  blocks: BlockView[];
  prompt: BlockView | null;
}

/** Answers "is this a session?" with a cache, so resolving many keys costs one lookup per candidate id. */
export function sessionExistence(store: SessionStore): (id: string) => Promise<boolean> {
  const cache = new Map<string, Promise<boolean>>();
  const check = async (id: string): Promise<boolean> => {
    if (hasSessionRegistry(store) && (await store.registry.get(id))) return true;
    if (hasTransfer(store)) return (await store.transfer.footprint(id)) !== null;
    return (await store.session(id).getLatestLeaf()) !== null;
  };
  return (id) => {
    let known = cache.get(id);
    if (!known) {
      known = check(id);
      cache.set(id, known);
    }
    return known;
  };
}

function view(label: string, key: string, content: string): BlockView {
  return { label, key, content, tokens: estimateStringTokens(content) };
}

/** Every stored block key with its owner, read once (blocks are few: a handful per session). */
export async function* ownedBlocks(
  store: SessionStore,
  exists: (id: string) => Promise<boolean> = sessionExistence(store),
): AsyncGenerator<{ owner: string | null; block: BlockView }> {
  if (!hasTransfer(store)) return;
  for await (const row of store.transfer.exportRows()) {
    // Blocks come before entries; the first entry ends the blocks.
    if (row.kind !== "block") break;
    const owner = await blockOwner(row.key, exists);
    yield { owner: owner?.sessionId ?? null, block: view(owner?.label ?? row.key, row.key, row.content) };
  }
}

/** The blocks and frozen prompt stored for one session. */
export async function sessionBlocks(store: SessionStore, sessionId: string): Promise<SessionBlocks> {
  const result: SessionBlocks = { sessionId, blocks: [], prompt: null };
  if (!hasContextStorage(store)) return result;
  if (hasTransfer(store)) {
    const exists = sessionExistence(store);
    for await (const row of store.transfer.exportRows()) {
      if (row.kind !== "block") break;
      // Only keys ending in `_<sessionId>` can be this session's; the owner check settles longer ids ending alike.
      if (!row.key.endsWith(`_${sessionId}`)) continue;
      const owner = await blockOwner(row.key, exists);
      if (owner?.sessionId !== sessionId) continue;
      if (owner.label === PROMPT_LABEL) result.prompt = view(owner.label, row.key, row.content);
      else result.blocks.push(view(owner.label, row.key, row.content));
    }
    const prompt = result.prompt?.content;
    for (const block of result.blocks) {
      block.reminder = prompt === undefined ? null : pendingReminder(prompt, block.label, block.content);
    }
    return result;
  }
  // Without a listing, only the prompt's key is known for certain.
  const key = `${PROMPT_LABEL}_${sessionId}`;
  const prompt = await store.blocks.getBlock(key);
  if (prompt !== null) result.prompt = view(PROMPT_LABEL, key, prompt);
  return result;
}
