import { blockKey, foreignBlockKey, memoryDirectoryKey } from "../context/block-keys.js";
import { hasContextStorage } from "../contract/context.js";
import type { SessionMessage } from "../contract/message.js";
import { hasStepWrites } from "../contract/step.js";
import type { SessionStore } from "../contract/store.js";

/**
 * Appends copies of `messages` to `sessionId` as one linear chain (the first a new root), each with a fresh id.
 * Writes go to the store directly, not through a Session, so copying never triggers automatic compaction halfway.
 */
export async function copyMessages(
  store: SessionStore,
  sessionId: string,
  messages: readonly SessionMessage[],
): Promise<void> {
  // A synthetic overlay message (`compaction_…`) becomes a real message here, so it needs a fresh id anyway.
  const copies = messages.map((message): SessionMessage => ({ ...message, id: crypto.randomUUID() }));
  // One step where the store writes steps: one transaction, all or nothing, instead of a commit per message.
  if (hasStepWrites(store)) {
    await store.writeStep({ sessionId, messages: copies, parentId: null, guard: false });
    return;
  }
  const provider = store.session(sessionId);
  let parentId: string | null = null;
  for (const copy of copies) {
    await provider.appendMessage(copy, parentId);
    parentId = copy.id;
  }
}

/** Copies the stored content of auto-wired blocks (`<label>_<from>` → `<label>_<to>`); missing rows are skipped. */
export async function copyBlocks(
  store: SessionStore,
  labels: readonly string[],
  from: string,
  to: string,
): Promise<void> {
  if (!hasContextStorage(store)) return;
  for (const label of labels) {
    // A block whose key is another session's (block-keys.ts) is not the source's to copy.
    if (foreignBlockKey(labels, label, from) || foreignBlockKey(labels, label, to)) continue;
    const content = await store.blocks.getBlock(blockKey(label, from));
    if (content !== null) await store.blocks.setBlock(blockKey(label, to), content, { sessionId: to });
  }
}

/** The context-block keys a session owns: its auto-wired blocks, its cached prompt and an agent session's header. */
export function sessionBlockKeys(labels: Iterable<string>, sessionId: string): string[] {
  const keys = new Set<string>();
  const all = [...labels];
  // A block whose key is another session's (block-keys.ts) is not this session's to delete.
  for (const label of all) if (!foreignBlockKey(all, label, sessionId)) keys.add(blockKey(label, sessionId));
  keys.add(`_system_prompt_${sessionId}`);
  // The header of an agent session (agent/storage/mapping.ts HEADER_LABEL), so deleting one leaves nothing behind.
  keys.add(`_agent_state_${sessionId}`);
  // The session's memory-tool directory (ai-sdk/memory-tool), so an erasure leaves none of its files.
  keys.add(memoryDirectoryKey("session", sessionId));
  return [...keys];
}
