/**
 * The rows of a memory session as a tree: reading paths and messages from them (payloads restored), and the changes
 * a write makes to them (a row inserted under its parent, replaced in place, spliced out on delete), with the
 * payload links each change takes or gives back. The provider (provider.ts) and an agent step (step.ts) write
 * through these.
 */

import type { SessionMessage } from "../contract/message.js";
import type { DeleteTip } from "../contract/provider.js";
import { SessionError } from "../errors.js";
import { parseMessage } from "../message/json.js";
import { messageText } from "../message/text.js";
import { estimateMessageTokens } from "../message/tokens.js";
import { utf8Length } from "../runtime/bytes.js";
import { hydrateSync, offloadMessage } from "../store/media/offload.js";
import type {
  MemoryBackend as MemoryStore,
  MemoryMessageRow as Row,
  MemorySessionData as SessionData,
} from "./data.js";

/** The rows from the root down to `leaf` (none for null). */
export function pathTo(leaf: Row | null): Row[] {
  const path: Row[] = [];
  for (let row = leaf; row; row = row.parent) path.push(row);
  return path.reverse();
}

/** Parsed messages of rows (corrupt rows skipped) with their payloads restored in one lookup. */
export function toMessages(store: MemoryStore, rows: readonly Row[]): SessionMessage[] {
  const messages = rows.map((row) => parseMessage(row.json)).filter((m): m is SessionMessage => m !== null);
  return hydrateSync(messages, (hashes) => store.attachments.load(hashes));
}

/** The message of a row, payloads restored (null for none, or a corrupt row). */
export function toMessage(store: MemoryStore, row: Row | null | undefined): SessionMessage | null {
  return row ? (toMessages(store, [row])[0] ?? null) : null;
}

/** The JSON a read of the row returns: its payloads restored. */
export function storedJson(store: MemoryStore, row: Row): string {
  return row.hashes.length === 0 ? row.json : JSON.stringify(toMessage(store, row));
}

/** `CONFLICT`: an append's expected latest leaf is not the session's. */
export function leafConflict(
  sessionId: string,
  actual: string | null,
  expected: string | null,
): SessionError {
  return new SessionError(
    "CONFLICT",
    `The latest leaf of session "${sessionId}" is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`,
  );
}

/** `PARENT_NOT_FOUND`: an append names a parent the session does not hold. */
export function parentNotFound(parentId: string, sessionId: string): SessionError {
  return new SessionError(
    "PARENT_NOT_FOUND",
    `Parent message "${parentId}" is not in session "${sessionId}"`,
  );
}

/** The row an append of session `sessionId` goes under (`PARENT_NOT_FOUND` for an id not stored). */
export function parentRow(
  data: SessionData,
  parentId: string | null | undefined,
  sessionId: string,
): Row | null {
  if (parentId === undefined) return data.leaf;
  if (parentId === null) return null;
  const parent = data.rows.get(parentId);
  if (!parent) throw parentNotFound(parentId, sessionId);
  return parent;
}

/** Stores a new row under `parent`, which becomes the latest leaf. */
export function insertRow(
  store: MemoryStore,
  data: SessionData,
  message: SessionMessage,
  json: string,
  parent: Row | null,
  createdAt: string,
): void {
  const stored = offloadMessage(message, json);
  const row: Row = {
    seq: store.nextSeq(),
    id: message.id,
    role: message.role,
    json: stored.content,
    hashes: stored.attachments.map((a) => a.hash),
    text: messageText(message),
    bytes: utf8Length(stored.content),
    tokens: estimateMessageTokens([message]),
    createdAt,
    parent,
    children: [],
  };
  store.attachments.link(stored.attachments);
  parent?.children.push(row);
  data.rows.set(row.id, row);
  data.leaf = row;
}

/** Replaces a row's message in place. Identical JSON is identical content: nothing is written (the other backends compare a stored hash). */
export function replaceRow(
  store: MemoryStore,
  row: Row,
  message: SessionMessage,
  json: string,
): { updated: boolean } {
  const stored = offloadMessage(message, json);
  if (row.json === stored.content) return { updated: false };
  // Link the new payloads before dropping the old links, so a payload kept by the update is never deleted.
  store.attachments.link(stored.attachments);
  store.attachments.unlink(row.hashes);
  row.json = stored.content;
  row.hashes = stored.attachments.map((a) => a.hash);
  row.role = message.role;
  row.text = messageText(message);
  row.terms = undefined;
  row.times = undefined;
  row.bytes = utf8Length(stored.content);
  row.tokens = estimateMessageTokens([message]);
  return { updated: true };
}

/**
 * Deletes the rows `messageIds`, splicing their children onto their parents, and the overlays that named them; a
 * deleted latest leaf gives way to its nearest surviving ancestor (none: an empty path), so the active path is the
 * previous one minus the deleted messages. The facts drop the deleted messages from their sources (memory/facts.ts).
 */
export function deleteRows(
  store: MemoryStore,
  data: SessionData,
  sessionId: string,
  messageIds: readonly string[],
  tip: DeleteTip = "newest-leaf",
): void {
  const deleted = new Set<string>();
  const tipBefore = data.leaf;
  for (const id of messageIds) {
    const row = data.rows.get(id);
    if (!row) continue;
    // Splice: children move up to the deleted message's parent, keeping their order by storage sequence.
    for (const child of row.children) child.parent = row.parent;
    if (row.parent) {
      const siblings = row.parent.children.filter((c) => c !== row).concat(row.children);
      row.parent.children = siblings.sort((a, b) => a.seq - b.seq);
    }
    data.rows.delete(id);
    store.attachments.unlink(row.hashes);
    deleted.add(id);
    // The tip moves up (an ancestor deleted later in this loop moves it up again; one deleted earlier already
    // re-parented it), then down to the newest leaf below the survivor once every row is gone.
    if (data.leaf === row) data.leaf = row.parent;
  }
  if (deleted.size === 0) return;
  if (tip === "newest-leaf" && data.leaf !== tipBefore && data.leaf) data.leaf = newestLeafBelow(data.leaf);
  store.facts.forgetMessages(sessionId, deleted); // their facts' sources; a fact left with none goes
  data.compactions = data.compactions.filter(
    (c) => !deleted.has(c.fromMessageId) && !deleted.has(c.toMessageId),
  );
}

/** The newest childless row of `top`'s subtree (`top` itself when it has no children): where a deleted tip goes. */
function newestLeafBelow(top: Row): Row {
  let best: Row | null = null;
  const stack = [top];
  for (let row = stack.pop(); row; row = stack.pop()) {
    if (row.children.length === 0) {
      if (!best || row.seq > best.seq) best = row;
    } else stack.push(...row.children);
  }
  return best ?? top;
}

/** The newest row without children (the leaf an import falls back to), or null. */
export function newestChildless(data: SessionData): Row | null {
  let best: Row | null = null;
  for (const row of data.rows.values()) {
    if (row.children.length === 0 && (!best || row.seq > best.seq)) best = row;
  }
  return best;
}
