/**
 * Sealed context blocks and search entries on SQLite (context/sealing.ts): the owner of a row (its record's, or for
 * a row with no record its key's or label's by the suffix rule), the stored form of a write (sealed for an owner
 * with a key, else as it is), and the opening of a read. A store without a keyring asks nothing; one with a keyring
 * reads the row's owner (at most one indexed statement: none for a row recorded as an owner's) on every block or
 * entry write and on every read of a sealed row.
 */

import { type OpenedEntry, openKeyedEntry, sealKeyedEntry } from "../../context/entry-keys.js";
import type { RecordColumns } from "../../context/records.js";
import { keyScope, openBlock, ownerOfLongest, sealBlock } from "../../context/sealing.js";
import { type BlindTokens, blindTokensOf } from "../../search/blind-tokens.js";
import { entryText, indexTokens, searchableText } from "../../search/tokens.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { readFreeText, storedFreeText } from "../engines/sqlite/free-text.js";
import { type RecordRow, recordOfRow, recordOwners } from "./records.js";

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

/**
 * The owner of a row recorded so: the recorded owner, the recorded session's owner, or for a row with no record
 * the owner its key (or label) names by the suffix rule ({@link keyOwner}).
 */
export function rowOwner(driver: SqlDriver, name: string, record: RecordColumns): string | null {
  if (record.owner !== null) return record.owner;
  if (record.sessionId === null) return keyOwner(driver, name);
  return (
    driver.get<{ owner: string | null }>("SELECT owner FROM agent_sessions WHERE id = ?", [record.sessionId])
      ?.owner ?? null
  );
}

// The key that seals writes of the row's owner, or null (clear); a wrong or lost key is DECRYPT_FAILED.
function sealingKey(
  driver: SqlDriver,
  name: string,
  record: RecordColumns,
  where: string,
): Uint8Array | null {
  if (!driver.keys) return null;
  const owner = rowOwner(driver, name, record);
  return owner === null ? null : driver.keys.ownerKey(owner, true, where);
}

/** A block's stored content and `sealed` flag (1, or null in clear), sealed for the owner of its kept `record`. */
export function storedBlock(
  driver: SqlDriver,
  key: string,
  content: string,
  record: RecordColumns,
): { content: string | Uint8Array; sealed: 1 | null } {
  const seal = sealingKey(driver, key, record, `block "${key}"`);
  return seal
    ? { content: sealBlock(seal, key, content), sealed: 1 }
    : { content: storedFreeText(content), sealed: null };
}

/** A block row's content columns (read through freeTextSql), its `sealed` flag and its record. */
export interface BlockReadRow extends RecordRow {
  content: unknown;
  content_encoded: unknown;
  sealed: unknown;
}

/** A block's content as read (its columns read through freeTextSql, and `sealed`). */
export function readBlockRow(driver: SqlDriver, key: string, row: BlockReadRow): string {
  const text = readFreeText(row.content, row.content_encoded);
  if (row.sealed == null) return text;
  return openBlock(driver.keys, rowOwner(driver, key, recordOfRow(row)), key, text);
}

/**
 * What an entry write stores: its key (a keyed digest when sealed, entry-keys.ts), its content, `sealed_chars` (the
 * length of its key and content when sealed) and its index text.
 */
export interface StoredEntry {
  key: string;
  content: string | Uint8Array;
  sealedChars: number | null;
  text: string;
}

/** An entry's stored form: sealed, with its words as the blind tokens of its kept `record`'s owner with a key. */
export function storedEntry(
  driver: SqlDriver,
  label: string,
  key: string,
  content: string,
  record: RecordColumns,
): StoredEntry {
  const seal = sealingKey(driver, label, record, `entry "${key}" of "${label}"`);
  const text = entryText(key, content);
  if (!seal) return { key, content: storedFreeText(content), sealedChars: null, text: searchableText(text) };
  const sealed = sealKeyedEntry(seal, label, key, content);
  return {
    ...sealed,
    // The length ranking reads (in code points, as SQLite's length() counts text in clear).
    sealedChars: [...key].length + [...content].length,
    text: blindTokensOf(seal).text(indexTokens(text)),
  };
}

/**
 * The blind tokens a search of `label`'s entries also matches: those of each owner of its sealed entries (by their
 * records; one statement over the label's sealed rows), none when none is sealed.
 */
export function labelBlinds(driver: SqlDriver, label: string): BlindTokens[] {
  const keys = driver.keys;
  if (!keys) return [];
  const records = driver.all<RecordRow>(
    "SELECT DISTINCT session_id, owner FROM agent_search_entries WHERE label = ? AND sealed_chars IS NOT NULL",
    [label],
  );
  const owners = new Set(records.map((row) => rowOwner(driver, label, recordOfRow(row))));
  return [...owners].flatMap((owner) =>
    owner === null ? [] : keys.ownerSearchKeys(owner, `entries of "${label}"`).map(blindTokensOf),
  );
}

/**
 * Opens the entries of one label as read (`sealed_chars` non-null: sealed), each with its record's owner's key:
 * `key` is the stored one, the real key comes back with the content.
 */
export function entryOpener(driver: SqlDriver, label: string): (key: string, row: EntryRow) => OpenedEntry {
  const ownerOf = recordOwners((record) => rowOwner(driver, label, record));
  return (key, row) => {
    const text = readFreeText(row.content, row.content_encoded);
    if (row.sealed_chars == null) return { key, content: text };
    return openKeyedEntry(driver.keys, ownerOf(row), label, key, text);
  };
}

/** An entry row's content columns (read through freeTextSql), its `sealed_chars` and its record. */
export interface EntryRow extends RecordRow {
  content: unknown;
  content_encoded: unknown;
  sealed_chars: unknown;
}
