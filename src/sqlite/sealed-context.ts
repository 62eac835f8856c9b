/**
 * Sealed context blocks and search entries on SQLite (context/sealing.ts): the owner of a block key or an entry
 * label, the stored form of a write (sealed for an owner with a key, else as it is), and the opening of a read.
 * A store without a keyring asks nothing; one with a keyring reads the key's owner (one indexed statement) on
 * every block or entry write and on every read of a sealed row.
 */
import { keyScope, openBlock, openEntry, ownerOfLongest, sealBlock, sealEntry } from "../context/sealing.js";
import { type BlindTokens, blindTokensOf } from "../search/blind-tokens.js";
import { entryText, indexTokens, searchableText } from "../search/tokens.js";
import type { SqlDriver } from "./connection/driver.js";
import { readFreeText, storedFreeText } from "./connection/free-text.js";

/** The owner of a block key (or an entry label), or null: it belongs to no registered owned session. */
export function keyOwner(driver: SqlDriver, key: string): string | null {
  const scope = keyScope(key);
  if ("owner" in scope) return scope.owner;
  if (scope.sessions.length === 0) return null;
  return ownerOfLongest(
    driver.all<{ id: string; owner: string | null }>(
      "SELECT id, owner FROM agent_sessions WHERE id IN (SELECT value FROM json_each(?))",
      [JSON.stringify(scope.sessions)],
    ),
  );
}

// The key that seals writes of the key's owner, or null (clear); a wrong or lost key is DECRYPT_FAILED.
function sealingKey(driver: SqlDriver, key: string, where: string): Uint8Array | null {
  if (!driver.keys) return null;
  const owner = keyOwner(driver, key);
  return owner === null ? null : driver.keys.ownerKey(owner, true, where);
}

/** A block's stored content and `sealed` flag (1, or null in clear). */
export function storedBlock(
  driver: SqlDriver,
  key: string,
  content: string,
): { content: string | Uint8Array; sealed: 1 | null } {
  const seal = sealingKey(driver, key, `block "${key}"`);
  return seal
    ? { content: sealBlock(seal, key, content), sealed: 1 }
    : { content: storedFreeText(content), sealed: null };
}

/** A block row's content columns (read through freeTextSql) and its `sealed` flag. */
export interface BlockReadRow {
  content: unknown;
  content_encoded: unknown;
  sealed: unknown;
}

/** A block's content as read (its columns read through freeTextSql, and `sealed`). */
export function readBlockRow(driver: SqlDriver, key: string, row: BlockReadRow): string {
  const text = readFreeText(row.content, row.content_encoded);
  return row.sealed == null ? text : openBlock(driver.keys, keyOwner(driver, key), key, text);
}

/** What an entry write stores: its content, `sealed_chars` (its length when sealed) and its index text. */
export interface StoredEntry {
  content: string | Uint8Array;
  sealedChars: number | null;
  text: string;
}

/** An entry's stored form: sealed, with its words as the owner's blind tokens, for an owner with a key. */
export function storedEntry(driver: SqlDriver, label: string, key: string, content: string): StoredEntry {
  const seal = sealingKey(driver, label, `entry "${key}" of "${label}"`);
  const text = entryText(key, content);
  if (!seal) return { content: storedFreeText(content), sealedChars: null, text: searchableText(text) };
  return {
    content: sealEntry(seal, label, key, content),
    // The length ranking reads (in code points, as SQLite's length() counts text in clear).
    sealedChars: [...content].length,
    text: blindTokensOf(seal).text(indexTokens(text)),
  };
}

/** The owners' blind tokens a search of `label`'s entries also matches (none when its owner has no key). */
export function labelBlinds(driver: SqlDriver, label: string): BlindTokens[] {
  if (!driver.keys) return [];
  const owner = keyOwner(driver, label);
  if (owner === null) return [];
  return driver.keys.ownerSearchKeys(owner, `entries of "${label}"`).map(blindTokensOf);
}

/** Opens the entries of one label as read (`sealed_chars` non-null: sealed). */
export function entryOpener(driver: SqlDriver, label: string): (key: string, row: EntryRow) => string {
  let owner: { of: string | null } | undefined;
  return (key, row) => {
    const text = readFreeText(row.content, row.content_encoded);
    if (row.sealed_chars == null) return text;
    owner ??= { of: keyOwner(driver, label) };
    return openEntry(driver.keys, owner.of, label, key, text);
  };
}

/** An entry row's content columns (read through freeTextSql) and its `sealed_chars`. */
export interface EntryRow {
  content: unknown;
  content_encoded: unknown;
  sealed_chars: unknown;
}
