/**
 * The stored keys of an encrypted owner's search entries (docs/PRIVACY.md, "Search entries"): an entry's key is
 * what the model or the app named it (set_context makes it from the content's first words), so for an owner with a
 * key the row's `key` column holds a keyed digest of it instead, and the real key travels sealed with the content.
 * The digest is an HMAC-SHA256 under the owner's blind-index key (store/crypto/blind.ts) in a domain of its own,
 * of the label and the key: a write of the same key finds the same row, nobody without the key can confirm a guessed
 * key, and once erasure destroyed the key nobody can. It starts {@link DIGEST_PREFIX}; an entry sealed before digests
 * (its key in clear beside the sealed content) still opens and is found (sql/context-store/*-sealed.ts).
 */
import { hmacSha256Hex } from "../runtime/aead.js";
import { deriveBlindKey } from "../store/crypto/blind.js";
import type { ContentKeys } from "../store/crypto/content-keys.js";
import { openEntry, sealEntry } from "./sealing.js";

/** The start of a stored entry key that is a keyed digest (`~`, as sealed content starts, is rare in keys). */
export const DIGEST_PREFIX = "~key1:";
/** Hex characters of the digest after its prefix: 128 bits. */
const DIGEST_CHARS = 32;
const DIGEST = /^~key1:[0-9a-f]{32}$/;
// The domain of these digests under the blind key: the blind index's are `w\0…` and `p\0…`, eve's ids `id\0…`.
const DOMAIN = "entry-key\u0000";

// One blind key per owner key object (a keyring answers the same object each time).
const blindKeys = new WeakMap<Uint8Array, Uint8Array>();

/** The key column of an entry sealed under `ownerKey`: the keyed digest of its label and key. */
export function entryKeyDigest(ownerKey: Uint8Array, label: string, key: string): string {
  let blind = blindKeys.get(ownerKey);
  if (blind === undefined) {
    blind = deriveBlindKey(ownerKey);
    blindKeys.set(ownerKey, blind);
  }
  const mac = hmacSha256Hex(blind, DOMAIN + JSON.stringify([label, key]));
  return DIGEST_PREFIX + mac.slice(0, DIGEST_CHARS);
}

/** True when a stored key has a digest's form (a sealed row so keyed carries its real key inside). */
export function isEntryKeyDigest(stored: string): boolean {
  return stored.length === DIGEST_PREFIX.length + DIGEST_CHARS && DIGEST.test(stored);
}

/** An entry as the app wrote it: its real key and content. */
export interface OpenedEntry {
  key: string;
  content: string;
}

/**
 * An entry sealed under `ownerKey`: its stored key (the digest) and its sealed content, which holds the real key and
 * the content and is bound to the label and the digest (so a row moved to another key does not open).
 */
export function sealKeyedEntry(
  ownerKey: Uint8Array,
  label: string,
  key: string,
  content: string,
): { key: string; content: string } {
  const digest = entryKeyDigest(ownerKey, label, key);
  return { key: digest, content: sealEntry(ownerKey, label, digest, JSON.stringify([key, content])) };
}

/**
 * A sealed entry opened with its owner's key: under a digest, its real key and content; an entry sealed before
 * digests (its key in clear) as it is. `DECRYPT_FAILED` as sealing.ts openEntry.
 */
export function openKeyedEntry(
  keys: ContentKeys | undefined,
  owner: string | null,
  label: string,
  storedKey: string,
  stored: string,
): OpenedEntry {
  const text = openEntry(keys, owner, label, storedKey, stored);
  if (isEntryKeyDigest(storedKey)) {
    const pair = pairOf(text);
    if (pair) return pair;
  }
  return { key: storedKey, content: text };
}

/** The key and content a digest-keyed entry seals, or undefined (a clear key that only looks like a digest). */
function pairOf(text: string): OpenedEntry | undefined {
  if (!text.startsWith("[")) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === "string"))
      return { key: value[0] as string, content: value[1] as string };
  } catch {
    // Not a pair: the row was sealed before digests, its clear key only looks like one.
  }
  return undefined;
}

/**
 * The characters an entry's search ranking counts (its key and content, as in clear) in SQL, over the row's `key`,
 * `content` and `sealed_chars` columns (table alias `e`): a digest-keyed row's `sealed_chars` counts both, an
 * older sealed row's only the content.
 */
export function entryCharsSql(e: string): string {
  return `CASE WHEN ${e}.sealed_chars IS NULL THEN length(${e}.key) + length(${e}.content)
    WHEN substr(${e}.key, 1, ${DIGEST_PREFIX.length}) = '${DIGEST_PREFIX}' THEN ${e}.sealed_chars
    ELSE length(${e}.key) + ${e}.sealed_chars END`;
}
