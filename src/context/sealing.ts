/**
 * Sealed context blocks and search entries (docs/PRIVACY.md, "Encryption at rest"): who owns the key of a row with
 * no record (a recorded row is its record's owner's: sqlite/ and sql/context-store/postgres-sealed.ts rowOwner), and the
 * sealed form of a block's or an entry's text. An unrecorded block is an owner's when its key is the owner's
 * memory-tool directory (`_memories_owner_<owner>`) or names a registered session with that owner as
 * `<label>_<sessionId>` (the longest suffix after a `_` that names a registered session wins, as erasure reads
 * keys: block-keys.ts blockOwner); an unrecorded entry is its label's owner's, the label read as a block key. Any
 * other key — a shared block, the unnamed session's, a label naming no registered session — belongs to no owner
 * and is stored in clear.
 */
import type { ContentKeys } from "../store/crypto/content-keys.js";
import { decode, encode } from "../store/crypto/row-codec.js";
import { memoryDirectoryKey } from "./block-keys.js";

const OWNER_DIRECTORY = memoryDirectoryKey("owner", "");

/** Who a block key can belong to: an owner named in the key, or the sessions its suffixes name (longest first). */
export type KeyScope = { owner: string } | { sessions: string[] };

/** The owner a key names, or the session ids its suffixes could name (none: it belongs to no one). */
export function keyScope(key: string): KeyScope {
  if (key.startsWith(OWNER_DIRECTORY) && key.length > OWNER_DIRECTORY.length) {
    return { owner: key.slice(OWNER_DIRECTORY.length) };
  }
  const sessions: string[] = [];
  for (let at = key.indexOf("_", 1); at >= 0; at = key.indexOf("_", at + 1)) {
    if (at + 1 < key.length) sessions.push(key.slice(at + 1));
  }
  return { sessions };
}

/** The owner of the longest of `found` (registered sessions among a scope's, with their owners), or null. */
export function ownerOfLongest(found: readonly { id: string; owner: string | null }[]): string | null {
  let best: { id: string; owner: string | null } | undefined;
  for (const row of found) if (best === undefined || row.id.length > best.id.length) best = row;
  return best?.owner ?? null;
}

/** A block's content sealed under `key`, bound to its block key (the row codec's "block" kind). */
export function sealBlock(key: Uint8Array, blockKey: string, content: string): string {
  return encode("block", key, { key: blockKey }, content);
}

/** An entry's content sealed under `key`, bound to its label and key (the row codec's "entry" kind). */
export function sealEntry(key: Uint8Array, label: string, entryKey: string, content: string): string {
  return encode("entry", key, { label, key: entryKey }, content);
}

/**
 * The content of a sealed block, opened with the owner's key it names: none (a store without a keyring, an owner
 * the keyring has no such key for), a wrong one, changed bytes or a row moved to another key are `DECRYPT_FAILED`.
 */
export function openBlock(
  keys: ContentKeys | undefined,
  owner: string | null,
  blockKey: string,
  stored: string,
): string {
  return decode("block", keys, owner, { key: blockKey }, stored);
}

/** The content of a sealed entry; `DECRYPT_FAILED` when it does not open (see {@link openBlock}). */
export function openEntry(
  keys: ContentKeys | undefined,
  owner: string | null,
  label: string,
  entryKey: string,
  stored: string,
): string {
  return decode("entry", keys, owner, { label, key: entryKey }, stored);
}
