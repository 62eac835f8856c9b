/**
 * Sealed context blocks and search entries on Postgres (context/sealing.ts; the SQLite twin is
 * src/sqlite/sealed-context.ts): the owner of a block key or an entry label, the stored form of a write and the
 * opening of a read. An entry of an owner with a key is sealed and its search vector holds the owner's blind tokens
 * (search/blind-tokens.ts) in its words' positions, so a search of its label, whose terms are hashed with the same
 * key ({@link labelBlinds}), finds it as in clear (docs/PRIVACY.md). Every store (one without a keyring too, to
 * refuse an owner with a key) reads the key's owner with its key check (one indexed statement) on every block or
 * entry write, and the owner on every search of a label and on every read of a sealed row.
 */
import { keyScope, openBlock, openEntry, ownerOfLongest, sealBlock, sealEntry } from "../context/sealing.js";
import { type BlindTokens, blindTokensOf } from "../search/blind-tokens.js";
import { entryText } from "../search/tokens.js";
import type { Query } from "./connection/client.js";
import { decodeContent, encodeContent } from "./connection/text.js";
import type { Tables } from "./schema.js";
import { ownerHashSql, toTsvector } from "./search/fts.js";

/** The owner of a block key (or an entry label), or null: it belongs to no registered owned session. */
export async function keyOwner(query: Query, t: Tables, key: string): Promise<string | null> {
  const scope = keyScope(key);
  if ("owner" in scope) return scope.owner;
  if (scope.sessions.length === 0) return null;
  return ownerOfLongest(
    await query<{ id: string; owner: string | null }>(
      `SELECT id, owner FROM ${t.sessions} WHERE id = ANY($1::text[])`,
      [scope.sessions],
    ),
  );
}

// The key that seals writes of the key's owner, or null (clear); a wrong or lost key is DECRYPT_FAILED.
async function sealingKey(query: Query, t: Tables, key: string, where: string): Promise<Uint8Array | null> {
  const keys = t.keys;
  if (!keys) return null;
  const scope = keyScope(key);
  if ("owner" in scope) return keys.run(query, (k) => k.ownerKey(scope.owner, true, where));
  if (scope.sessions.length === 0) return null;
  // The sessions' owners with their key checks in one statement: the check seeds the keys, nothing more is read.
  const rows = await query<{ id: string; owner: string | null; key_check: string | null }>(
    `SELECT s.id, s.owner, k.key_check FROM ${t.sessions} s
     LEFT JOIN ${t.ownerKeys} k ON k.owner_hash = ${ownerHashSql("s.owner")} WHERE s.id = ANY($1::text[])`,
    [scope.sessions],
  );
  const owner = ownerOfLongest(rows);
  if (owner === null) return null;
  const check = rows.find((row) => row.owner === owner)?.key_check ?? undefined;
  return keys.run(query, (k) => k.ownerKey(owner, true, where), { owners: [], checks: [[owner, check]] });
}

/** A block's stored columns: content, its JSON-literal flag (text.ts) and whether it is sealed. */
export interface StoredBlock {
  content: string;
  json: boolean;
  sealed: boolean;
}

/** A block's stored form: sealed for an owner with a key (its ciphertext is ASCII: no JSON literal needed). */
export async function storedBlock(
  query: Query,
  t: Tables,
  key: string,
  content: string,
): Promise<StoredBlock> {
  const seal = await sealingKey(query, t, key, `block "${key}"`);
  if (seal) return { content: sealBlock(seal, key, content), json: false, sealed: true };
  return { ...encodeContent(content), sealed: false };
}

/** A block row as read: its columns and `sealed`. */
export interface BlockRow {
  content: string;
  content_json: boolean;
  sealed: boolean;
}

/** A block's content as read: opened when sealed. */
export async function readBlockRow(query: Query, t: Tables, key: string, row: BlockRow): Promise<string> {
  const text = decodeContent(row.content, row.content_json);
  return row.sealed ? openBlock(t.keys?.keys, await keyOwner(query, t, key), key, text) : text;
}

/** What an entry write stores: content, flag, `sealed_chars` (its length when sealed) and its search vector. */
export interface StoredEntry {
  content: string;
  json: boolean;
  sealedChars: number | null;
  search: string | null;
}

/** An entry's stored form: sealed, with its words as the owner's blind tokens, for an owner with a key. */
export async function storedEntry(
  query: Query,
  t: Tables,
  label: string,
  key: string,
  content: string,
): Promise<StoredEntry> {
  const seal = await sealingKey(query, t, label, `entry "${key}" of "${label}"`);
  if (seal) {
    const sealed = sealEntry(seal, label, key, content);
    // The length ranking reads (in code points, as Postgres's length() counts text in clear).
    const sealedChars = [...content].length;
    const search = toTsvector(entryText(key, content), undefined, blindTokensOf(seal));
    return { content: sealed, json: false, sealedChars, search };
  }
  return { ...encodeContent(content), sealedChars: null, search: toTsvector(entryText(key, content)) };
}

/**
 * The owner's blind tokens a search of `label`'s entries also matches (none when its owner has no key): its key,
 * and while a rotation is under way the key it moves from. `DECRYPT_FAILED` for a wrong or missing key. An owner
 * whose key this process has verified costs no statement beyond the label's owner.
 */
export async function labelBlinds(query: Query, t: Tables, label: string): Promise<BlindTokens[]> {
  const { keys } = t;
  if (!keys) return [];
  const owner = await keyOwner(query, t, label);
  if (owner === null) return [];
  const known = keys.knownSearchKeys(owner);
  if (known !== undefined) return known.map(blindTokensOf);
  const searchKeys = await keys.run(query, (k) => k.ownerSearchKeys(owner, `entries of "${label}"`));
  return searchKeys.map(blindTokensOf);
}

/** An entry row as read: its columns and `sealed_chars` (non-null: sealed). */
export interface EntryRow {
  key: string;
  content: string;
  content_json: boolean;
  sealed_chars: number | null;
}

/** Opens the entries of one label as read (the label's owner is read once, at its first sealed row). */
export function entryOpener(query: Query, t: Tables, label: string): (row: EntryRow) => Promise<string> {
  let owner: Promise<string | null> | undefined;
  return async (row) => {
    const text = decodeContent(row.content, row.content_json);
    if (row.sealed_chars === null) return text;
    owner ??= keyOwner(query, t, label);
    return openEntry(t.keys?.keys, await owner, label, row.key, text);
  };
}
