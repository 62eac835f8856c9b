/**
 * What stands for an owner inside a search index (store/owner.ts): a hash of the owner id, written beside the
 * session's own token into every indexed message of an owned session, so an owner's search is that token ANDed
 * with the match inside the index, and costs what the owner's matches cost, not what their session count does.
 * Owners never change (set when a session is registered), so the token of a row never goes stale.
 */
import { sha256Hex, utf8Encode } from "../runtime/bytes.js";

/**
 * The owner's hash as the indexes spell it: the first 128 bits of SHA-256 over its UTF-8 bytes, in lower-case
 * hex (letters and digits only, so every tokenizer keeps it whole). Postgres computes the same in SQL
 * (`encode(sha256(convert_to(owner, 'UTF8')), 'hex')`, first 32 characters) where a statement reads the owner.
 */
export function ownerHash(owner: string): string {
  // runtime/bytes: node:crypto where there is one, a portable SHA-256 in workerd (no Node.js built-ins there).
  return sha256Hex(utf8Encode(owner)).slice(0, OWNER_HASH_CHARS);
}

/** Length of {@link ownerHash} in characters. */
export const OWNER_HASH_CHARS = 32;
