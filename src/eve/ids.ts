/**
 * The names the eve door gives what it stores (docs/EVE.md, "What maps to what"): one agent-session session per eve
 * session and memory scope, registered for the scope's owner, with a `source` that names the scope and the eve
 * session by digests only (eve's scope key is already opaque; the eve session id is not kept in clear), and message
 * ids derived from the eve session and the message, so a retried capture names the rows it already wrote. What is
 * derived from a user's words (a captured message's id, a note's) is keyed for an owner with a key (ContentIds).
 */
import type { OwnerDigest, RegistryCapableStore } from "../contract/registry.js";
import { sha256Hex, utf8Encode } from "../runtime/bytes.js";

const plain: OwnerDigest = (text) => sha256Hex(utf8Encode(text));
const digest = (...parts: string[]): string => plain(parts.join("\u0000"));

/** The prefix of every registry `source` the door writes. */
export const SOURCE_PREFIX = "eve:";

/** The session that holds what eve session `eveSessionId` captured in the scope `scopeKey`. */
export function sessionIdOf(scopeKey: string, eveSessionId: string): string {
  return `eve-${digest("session", scopeKey, eveSessionId).slice(0, 40)}`;
}

/** The digest of an eve session id, as the registry `source` of its sessions ends with it. */
export function eveSessionTag(eveSessionId: string): string {
  return digest("eve-session", eveSessionId).slice(0, 24);
}

/** The digest of a scope key, as the registry `source` of its sessions starts with it. */
export function scopeTag(scopeKey: string): string {
  return digest("scope", scopeKey).slice(0, 24);
}

/** The registry `source` of the session of `scopeKey` and `eveSessionId`: `eve:<scope digest>:<session digest>`. */
export function sourceOf(scopeKey: string, eveSessionId: string): string {
  return `${SOURCE_PREFIX}${scopeTag(scopeKey)}:${eveSessionTag(eveSessionId)}`;
}

/** The prefix of the note messages `remember` writes. */
export const NOTE_PREFIX = "eve-note-";

/**
 * The ids of one owner's content (docs/PRIVACY.md, "Ids derived from content"): for an owner with a key, an
 * HMAC-SHA256 under its blind-index key (the store's `ownerDigests`), so the id of "I like cats" confirms no guess
 * of it to someone holding the file; for an owner in clear, a SHA-256. A key rotation changes the keyed ids: a
 * capture also knows a message by its {@link ContentIds.tag} (kept inside the sealed message), and a note is
 * looked for under each key the keyring still answers and in its unkeyed form (rows written before it was keyed).
 */
export class ContentIds {
  private constructor(private readonly digests: readonly OwnerDigest[]) {}

  /** True for an owner with a key (its ids are keyed, so a key rotation changes them). */
  get keyed(): boolean {
    return this.digests.length > 0;
  }

  /** The ids of `owner`'s content on `store` (`DECRYPT_FAILED` where the store's keys refuse the owner). */
  static async of(store: RegistryCapableStore, owner: string): Promise<ContentIds> {
    return new ContentIds((await store.registry.ownerDigests?.(owner)) ?? []);
  }

  /**
   * The id of a captured message: the eve session with the message's role, content and how many identical
   * messages came before it in the same capture, so capturing the same history again (a retry, a process restart,
   * the turn's completion after a compaction captured its start) names the same rows.
   */
  captured(eveSessionId: string, canonical: string, occurrence: number): string {
    return `eve-${this.under(this.digests[0], "message", eveSessionId, canonical, String(occurrence)).slice(0, 32)}`;
  }

  /**
   * The key-independent name of a captured message (the id an owner in clear has, and the id rows had before ids
   * were keyed), kept in the stored message's metadata, which is sealed for an owner with a key: a capture after a
   * key rotation still knows what it stored under the old key.
   */
  tag(eveSessionId: string, canonical: string, occurrence: number): string {
    return `eve-${this.under(plain, "message", eveSessionId, canonical, String(occurrence)).slice(0, 32)}`;
  }

  /** The id of the note a `remember` of `text` writes now (the same text remembered twice is one note). */
  note(text: string): string {
    return `${NOTE_PREFIX}${this.under(this.digests[0], "note", text).slice(0, 32)}`;
  }

  /** Every id a note of `text` may be stored under: {@link note}'s, then each previous key's, then unkeyed. */
  noteIds(text: string): string[] {
    const ids = [...this.digests, plain].map(
      (d) => `${NOTE_PREFIX}${this.under(d, "note", text).slice(0, 32)}`,
    );
    return [...new Set(ids)];
  }

  private under(d: OwnerDigest | undefined, ...parts: string[]): string {
    return (d ?? plain)(parts.join("\u0000"));
  }
}
