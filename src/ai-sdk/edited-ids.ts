/**
 * The stored id of an edited user message: `useChat` keeps the edited message's id, but the original stays in the
 * tree as a sibling, so the edit is stored under an id derived from its content. Deterministic, so the same edit
 * sent again (the page still holds the old id until it reloads) finds the same row. For an owner with a key the
 * digest is keyed (HMAC under its blind-index key, docs/PRIVACY.md "Ids derived from content"), so someone holding
 * the file cannot confirm a guess of the text by hashing it; an owner in clear, and a storage without
 * `contentDigests`, keep the plain SHA-256 ids.
 */
import type { SessionMessage } from "../contract/message.js";
import type { OwnerDigest } from "../contract/registry.js";
import { base64urlEncode, hexDecode, sha256Base64url } from "../runtime/bytes.js";
import { type ChatStorage, partsJson } from "./storage.js";

// Where an edit's digest sits among the owner's keyed ids (eve's are "note" and "message": src/eve/ids.ts).
const DOMAIN = "ai-sdk-edit\u0000";

/**
 * The id of an edit of `message` under `digest` (a keyed digest of its owner), or unkeyed: 128 bits of SHA-256
 * (the 32-bit FNV-1a hash used before let two different edits share an id, found by a search of a few thousand).
 */
export function editedId(message: SessionMessage, digest?: OwnerDigest): string {
  const parts = partsJson(message);
  if (digest === undefined) return `${message.id}~${sha256Base64url(parts).slice(0, 22)}`;
  // The keyed digest's first 128 bits, as base64url: the same shape as the unkeyed id.
  return `${message.id}~${base64urlEncode(hexDecode(digest(DOMAIN + parts).slice(0, 32)))}`;
}

/** The edited ids of one request's storage, its owner's digests read once, on the first edit. */
export class EditedIds {
  private digests: Promise<OwnerDigest[]> | undefined;

  constructor(private readonly storage: ChatStorage) {}

  /**
   * Where an edit of `message` is stored, or will be: the first of its ids that is stored (under the owner's
   * current key, each previous key the keyring still answers, then unkeyed: rows written before a key rotation or
   * before ids were keyed), else its id under the current key (unkeyed for an owner in clear).
   */
  async locate(message: SessionMessage): Promise<{ id: string; stored: SessionMessage | null }> {
    this.digests ??= this.storage.contentDigests?.() ?? Promise.resolve([]);
    const ids = [...new Set([...(await this.digests).map((d) => editedId(message, d)), editedId(message)])];
    for (const id of ids) {
      const stored = await this.storage.getMessage(id);
      if (stored !== null) return { id, stored };
    }
    return { id: ids[0]!, stored: null };
  }
}
