import { blockOwner } from "../../context/block-keys.js";
import { hasContextStorage, hasRecords } from "../../contract/context.js";
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

/**
 * The keys of the blocks a session owns: those the store records as its own (contract/context.ts ContextRecord),
 * whatever their label; on a store without records, the keys whose longest session suffix is it (block-keys.ts
 * blockOwner), read from the export stream, or only the prompt's key without one.
 */
export async function sessionBlockKeys(store: SessionStore, sessionId: string): Promise<string[]> {
  if (!hasContextStorage(store)) return [];
  if (hasRecords(store.blocks)) return store.blocks.recordedKeys({ sessionId });
  if (!hasTransfer(store)) return [`${PROMPT_LABEL}_${sessionId}`];
  const keys: string[] = [];
  const exists = sessionExistence(store);
  for await (const row of store.transfer.exportRows()) {
    if (row.kind !== "block") break;
    // Only keys ending in `_<sessionId>` can be this session's; the owner check settles longer ids ending alike.
    if (!row.key.endsWith(`_${sessionId}`)) continue;
    if ((await blockOwner(row.key, exists))?.sessionId === sessionId) keys.push(row.key);
  }
  return keys;
}

/** The label of a session's block key: the key less `_<sessionId>` (the whole key when it has another form). */
function labelOf(key: string, sessionId: string): string {
  const suffix = `_${sessionId}`;
  return key.endsWith(suffix) && key.length > suffix.length ? key.slice(0, -suffix.length) : key;
}

/** The blocks and frozen prompt stored for one session. */
export async function sessionBlocks(store: SessionStore, sessionId: string): Promise<SessionBlocks> {
  const result: SessionBlocks = { sessionId, blocks: [], prompt: null };
  if (!hasContextStorage(store)) return result;
  for (const key of await sessionBlockKeys(store, sessionId)) {
    const content = await store.blocks.getBlock(key);
    if (content === null) continue;
    const label = labelOf(key, sessionId);
    if (label === PROMPT_LABEL) result.prompt = view(label, key, content);
    else result.blocks.push(view(label, key, content));
  }
  const prompt = result.prompt?.content;
  for (const block of result.blocks) {
    block.reminder = prompt === undefined ? null : pendingReminder(prompt, block.label, block.content);
  }
  return result;
}
