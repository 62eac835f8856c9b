/**
 * Keyed digests of an owner's content (docs/PRIVACY.md, "Ids derived from content"): an id a door derives from what
 * a user wrote (eve's notes and captured messages, docs/EVE.md) is an HMAC-SHA256 under the owner's blind-index key
 * (blind.ts: HKDF of the owner's key, the key the search tokens are keyed with), so someone holding the file cannot
 * confirm a guess of the text by hashing it, and once erasing the owner destroyed its key nobody can. An owner
 * stored in clear has no key and so no keyed digest: the door uses a plain SHA-256 then.
 */
import type { OwnerDigest } from "../../contract/registry.js";
import { hmacSha256Hex } from "../../runtime/aead.js";
import { deriveBlindKey } from "./blind.js";
import type { ContentKeys } from "./content-keys.js";

// The domain of these digests under the blind key: the blind index's segments are `w\0…` and `p\0…` (blind.ts).
const DOMAIN = "id\u0000";

// One digest per key object (a keyring answers the same object each time; a forgotten key's entry goes with it).
const byKey = new WeakMap<Uint8Array, OwnerDigest>();

function digestUnder(ownerKey: Uint8Array): OwnerDigest {
  let digest = byKey.get(ownerKey);
  if (digest === undefined) {
    const blindKey = deriveBlindKey(ownerKey);
    digest = (text) => hmacSha256Hex(blindKey, DOMAIN + text);
    byKey.set(ownerKey, digest);
  }
  return digest;
}

/**
 * The owner's keyed digests: under its current key first, then under each previous key its keyring still answers
 * (a rotation under way, docs/PRIVACY.md "Key rotation"); none for an owner stored in clear. `DECRYPT_FAILED` as a
 * read of the owner is: a keyring without the key of an owner with sealed content, or with another key.
 */
export function ownerDigestsOf(keys: ContentKeys, owner: string): OwnerDigest[] {
  const current = keys.ownerKey(owner, false, `the ids of owner "${owner}"`);
  if (current === null) return [];
  const previous = keys.openingKeysOf(owner).filter((key) => key !== current);
  return [current, ...previous].map(digestUnder);
}
