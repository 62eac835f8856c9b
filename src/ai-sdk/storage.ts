import { fnv1a } from "../context/keys.js";
import { base64Encode } from "../runtime/bytes.js";
import type { SessionMessage } from "../types.js";

/**
 * What the chat helpers need from a conversation: a `Session` (recommended: it validates, size-limits and
 * compacts) or a store's per-session `SessionProvider`; `M` is its message type (`Session<M>`).
 */
export interface ChatStorage<M extends SessionMessage = SessionMessage> {
  getMessage(id: string): Promise<M | null>;
  appendMessage(
    message: M,
    parentId?: string | null,
    options?: { source?: "client" | "server" },
  ): Promise<unknown>;
  updateMessage(message: M): Promise<unknown>;
  /** Insert or replace by id in one write (a `Session` and this package's providers have it). */
  upsertMessage?(
    message: M,
    parentId?: string | null,
    options?: { source?: "client" | "server" },
  ): Promise<unknown>;
  getHistory(leafId?: string | null): Promise<M[]>;
}

/** A random message id in the AI SDK's style (16 URL-safe characters), without loading `ai`. */
export function chatMessageId(): string {
  // Web Crypto (global on Node and in Workers): 12 random bytes are 16 base64url characters, no padding.
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return base64Encode(bytes).replace(/\+/g, "-").replace(/\//g, "_");
}

/** True when two messages have the same parts (what the page shows and the model reads). */
export function sameParts(a: SessionMessage, b: SessionMessage): boolean {
  return JSON.stringify(a.parts) === JSON.stringify(b.parts);
}

function sameContent(a: SessionMessage, b: SessionMessage): boolean {
  return a.role === b.role && sameParts(a, b) && JSON.stringify(a.metadata) === JSON.stringify(b.metadata);
}

/**
 * The stored id of an edited user message: `useChat` keeps the edited message's id, but the original stays in
 * the tree as a sibling, so the edit is stored under an id derived from the content. Deterministic, so the same
 * edit sent again (the page still holds the old id until it reloads) finds the same row.
 */
export function editedId(message: SessionMessage): string {
  return `${message.id}~${fnv1a(JSON.stringify(message.parts))}`;
}

/**
 * Inserts `message` under `parentId`, or replaces the stored message with the same id in place (nothing is
 * written when the content is identical): `upsertMessage` where the storage has it, else read then write. What
 * the page posted is written as `source: "client"`, so a store's `reservedMetadataKeys` are stripped from it.
 */
export async function putMessage(
  storage: ChatStorage,
  message: SessionMessage,
  parentId: string | null,
  source: "client" | "server",
): Promise<void> {
  if (storage.upsertMessage) {
    await storage.upsertMessage(message, parentId, { source });
    return;
  }
  const stored = await storage.getMessage(message.id);
  if (stored === null) {
    const result = await storage.appendMessage(message, parentId, { source });
    // A concurrent writer stored the id first: replace its content like any other continuation.
    if ((result as { inserted?: boolean } | undefined)?.inserted !== false) return;
  } else if (sameContent(stored, message)) {
    return;
  }
  await storage.updateMessage(message);
}
