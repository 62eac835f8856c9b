import type { SessionMessage, StoredCompaction } from "../contract/message.js";
import type { OwnerDigest } from "../contract/registry.js";
import { SessionError } from "../errors.js";
import { base64urlEncode } from "../runtime/bytes.js";

/**
 * What the chat helpers need from a conversation: a `Session` (recommended: it validates, size-limits and
 * compacts) or a store's per-session `SessionProvider`; `M` is its message type (`Session<M>`).
 */
export interface ChatStorage<M extends SessionMessage = SessionMessage> {
  getMessage(id: string): Promise<M | null>;
  appendMessage(
    message: M,
    parentId?: string | null,
    options?: { source?: "client" | "server"; expectedLeafId?: string | null },
  ): Promise<unknown>;
  updateMessage(message: M): Promise<unknown>;
  /** Insert or replace by id in one write (a `Session` and this package's providers have it). */
  upsertMessage?(
    message: M,
    parentId?: string | null,
    options?: { source?: "client" | "server" },
  ): Promise<unknown>;
  getHistory(leafId?: string | null): Promise<M[]>;
  /**
   * The session's latest leaf (a `Session` and this package's providers have it): a send's first write expects it
   * unchanged, so two requests of one chat at once cannot both store a message.
   */
  getLatestLeaf?(): Promise<M | null>;
  /** The children of a message: an answer with replies is no longer continued. */
  getBranches(messageId: string): Promise<M[]>;
  /** The session's overlays (a `Session` and this package's providers have it): a summary the page shows is placed by them. */
  getCompactions?(): Promise<StoredCompaction[]>;
  /**
   * The keyed digests of the session's owner, current key first (a `Session` and this package's providers have
   * it; docs/PRIVACY.md, "Ids derived from content"): an edited message's id is keyed with them, and none (an owner
   * in clear) keeps the plain SHA-256 id. A storage without it stores every edit under the plain digest of its text.
   */
  contentDigests?(): Promise<OwnerDigest[]>;
}

/** A random message id in the AI SDK's style (16 URL-safe characters), without loading `ai`. */
export function chatMessageId(): string {
  // Web Crypto (global on Node and in Workers): 12 random bytes are 16 base64url characters, no padding.
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return base64urlEncode(bytes);
}

/** True when two messages have the same parts (what the page shows and the model reads). */
export function sameParts(a: SessionMessage, b: SessionMessage): boolean {
  return partsJson(a) === partsJson(b);
}

/**
 * The parts as JSON; parts JSON cannot hold (a BigInt, a cycle, nesting past the stack) are the page's bad input,
 * refused as an append would refuse them instead of escaping as a raw TypeError or RangeError.
 */
export function partsJson(message: SessionMessage): string {
  try {
    return JSON.stringify(message.parts);
  } catch (error) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Message "${message.id}" has parts that are not JSON: ${error instanceof Error ? error.name : "error"}`,
      { issues: [{ path: "parts", rule: "invalid" }] },
    );
  }
}

function sameContent(a: SessionMessage, b: SessionMessage): boolean {
  return a.role === b.role && sameParts(a, b) && JSON.stringify(a.metadata) === JSON.stringify(b.metadata);
}

/**
 * Stores the server's answer: inserted under `parentId`, or replacing the stored message with the same id in place
 * (a continuation; nothing is written when the content is identical). `upsertMessage` where the storage has it,
 * else read then write.
 */
export async function putMessage(
  storage: ChatStorage,
  message: SessionMessage,
  parentId: string | null,
): Promise<void> {
  if (storage.upsertMessage) {
    await storage.upsertMessage(message, parentId, { source: "server" });
    return;
  }
  const stored = await storage.getMessage(message.id);
  if (stored === null) {
    const result = await storage.appendMessage(message, parentId, { source: "server" });
    // A concurrent writer stored the id first: replace its content like any other continuation.
    if ((result as { inserted?: boolean } | undefined)?.inserted !== false) return;
  } else if (sameContent(stored, message)) {
    return;
  }
  await storage.updateMessage(message);
}
