/**
 * Sealed context blocks and search entries on Postgres (context/sealing.ts; the SQLite twin is
 * src/sql/context-store/sqlite-sealed.ts): the owner of a row (its record's, or for a row with no record its key's or label's
 * by the suffix rule), the stored form of a write and the opening of a read. An entry of an owner with a key is
 * sealed and its search vector holds the owner's blind tokens (search/blind-tokens.ts) in its words' positions, so
 * a search of its label, whose terms are hashed with the same key ({@link labelBlinds}), finds it as in clear
 * (docs/PRIVACY.md). A row recorded as an owner's or a session's reads its owner and key check through the store's
 * keys (cached once read: no statement for a known session and owner); an unrecorded row reads its key's owner with
 * its check (one indexed statement). A search of a label reads the records of its sealed entries (one statement).
 */

import { type OpenedEntry, openKeyedEntry, sealKeyedEntry } from "../../context/entry-keys.js";
import type { RecordColumns } from "../../context/records.js";
import { keyScope, openBlock, ownerOfLongest, sealBlock } from "../../context/sealing.js";
import { SessionError } from "../../errors.js";
import { type BlindTokens, blindTokensOf } from "../../search/blind-tokens.js";
import { entryText } from "../../search/tokens.js";
import { ownerGuard } from "../../store/crypto/write-guard.js";
import { ownerHash } from "../../store/owner.js";
import type { Query } from "../engines/postgres/client.js";
import { ownerHashSql, toTsvector } from "../engines/postgres/fts.js";
import { type Guarded, guardedOf } from "../engines/postgres/owner-guard.js";
import { decodeContent, encodeContent } from "../engines/postgres/text.js";
import type { KeyedTables } from "../sealing/postgres.js";
import { guardedKey } from "../sealing/postgres-key-guard.js";
import { keptRecord, NO_RECORD, type RecordRow, recordOwners, WRITE_TRIES } from "./records.js";

/** The owner of a block key (or an entry label), or null: it belongs to no registered owned session. */
export async function keyOwner(query: Query, t: KeyedTables, key: string): Promise<string | null> {
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

/**
 * The owner of a row recorded so: the recorded owner, the recorded session's owner, or for a row with no record
 * the owner its key (or label) names by the suffix rule ({@link keyOwner}).
 */
export async function rowOwner(
  query: Query,
  t: KeyedTables,
  name: string,
  record: RecordColumns,
): Promise<string | null> {
  if (record.owner !== null) return record.owner;
  const { sessionId } = record;
  if (sessionId === null) return keyOwner(query, t, name);
  if (t.keys) return t.keys.run(query, (k) => k.ownerOf(sessionId));
  const [row] = await query<{ owner: string | null }>(`SELECT owner FROM ${t.sessions} WHERE id = $1`, [
    sessionId,
  ]);
  return row?.owner ?? null;
}

// The key that seals writes of the row's owner, or null (clear); a wrong or lost key is DECRYPT_FAILED. `guarded`:
// a row recorded for a session is sealed as a message of it is, with what the write's statement must guard
// (key-guard.ts guardedKey), so a session another process gave another owner takes no row under the cached one's key.
async function sealingKey(
  query: Query,
  t: KeyedTables,
  key: string,
  record: RecordColumns,
  where: string,
  guarded: boolean,
): Promise<Guarded & { key: Uint8Array | null }> {
  const { sessionId } = record;
  if (guarded && sessionId !== null && record.owner === null) return guardedKey(query, t, sessionId, where);
  const { owner, key: seal } = await ownersKey(query, t, key, record, where);
  if (!guarded) return { key: seal };
  // A row of an owner (recorded so, or named by its key): its statement requires the owner's key to be still as
  // found (store/crypto/write-guard.ts), so a first key another process records meanwhile refuses it.
  return { key: seal, ...guardedOf(ownerGuard(owner === null ? null : ownerHash(owner), seal)) };
}

// The row's owner (the session's cached one, else as the row names it) and the key that seals its writes.
async function ownersKey(
  query: Query,
  t: KeyedTables,
  key: string,
  record: RecordColumns,
  where: string,
): Promise<{ owner: string | null; key: Uint8Array | null }> {
  const keys = t.keys;
  if (!keys) return { owner: null, key: null };
  const { sessionId, owner: recorded } = record;
  const of = (owner: string | null) =>
    owner === null
      ? { owner, key: null }
      : keys.run(query, (k) => ({ owner, key: k.ownerKey(owner, true, where) }));
  if (recorded !== null) return of(recorded);
  if (sessionId !== null) {
    return keys.run(query, (k) => {
      const owner = k.ownerOf(sessionId);
      return { owner, key: owner === null ? null : k.ownerKey(owner, true, where) };
    });
  }
  const scope = keyScope(key);
  if ("owner" in scope) return of(scope.owner);
  if (scope.sessions.length === 0) return { owner: null, key: null };
  // The sessions' owners with their key checks in one statement: the check seeds the keys, nothing more is read.
  const rows = await query<{ id: string; owner: string | null; key_check: string | null }>(
    `SELECT s.id, s.owner, k.key_check FROM ${t.sessions} s
     LEFT JOIN ${t.ownerKeys} k ON k.owner_hash = ${ownerHashSql("s.owner")} WHERE s.id = ANY($1::text[])`,
    [scope.sessions],
  );
  const owner = ownerOfLongest(rows);
  if (owner === null) return { owner, key: null };
  const check = rows.find((row) => row.owner === owner)?.key_check ?? undefined;
  const seal = await keys.run(query, (k) => k.ownerKey(owner, true, where), {
    owners: [],
    checks: [[owner, check]],
  });
  return { owner, key: seal };
}

/**
 * A block's stored columns: content, its JSON-literal flag (text.ts) and whether it is sealed; a guarded write's
 * guard (key-guard.ts).
 */
export interface StoredBlock extends Guarded {
  content: string;
  json: boolean;
  sealed: boolean;
}

/**
 * A block's stored form: sealed for the owner of its kept `record` with a key (its ciphertext is ASCII: no JSON
 * literal needed). `guarded`: the write's statement guards it (context-guard.ts).
 */
export async function storedBlock(
  query: Query,
  t: KeyedTables,
  key: string,
  content: string,
  record: RecordColumns,
  guarded = false,
): Promise<StoredBlock> {
  const { key: seal, ...guard } = await sealingKey(query, t, key, record, `block "${key}"`, guarded);
  if (seal) return { content: sealBlock(seal, key, content), json: false, sealed: true, ...guard };
  return { ...encodeContent(content), sealed: false, ...guard };
}

/** A block row as read: its columns, `sealed` and its record. */
export interface BlockRow extends RecordRow {
  content: string;
  content_json: boolean;
  sealed: boolean;
}

/** A block's content as read: opened when sealed. */
export async function readBlockRow(
  query: Query,
  t: KeyedTables,
  key: string,
  row: BlockRow,
): Promise<string> {
  const text = decodeContent(row.content, row.content_json);
  if (!row.sealed) return text;
  return openBlock(t.keys?.keys, await rowOwner(query, t, key, keptRecord(row, NO_RECORD)), key, text);
}

/**
 * What an entry write stores: its key (a keyed digest when sealed, entry-keys.ts), content, flag, `sealed_chars`
 * (the length of its key and content when sealed) and its search vector; a guarded write's guard (key-guard.ts).
 */
export interface StoredEntry extends Guarded {
  key: string;
  content: string;
  json: boolean;
  sealedChars: number | null;
  search: string | null;
}

/**
 * An entry's stored form: sealed, with its words as the blind tokens of its kept `record`'s owner with a key.
 * `guarded`: the write's statement guards it (context-guard.ts).
 */
export async function storedEntry(
  query: Query,
  t: KeyedTables,
  label: string,
  key: string,
  content: string,
  record: RecordColumns,
  guarded = false,
): Promise<StoredEntry> {
  const where = `entry "${key}" of "${label}"`;
  const { key: seal, ...guard } = await sealingKey(query, t, label, record, where, guarded);
  if (seal) {
    const sealed = sealKeyedEntry(seal, label, key, content);
    // The length ranking reads (in code points, as Postgres's length() counts text in clear).
    const sealedChars = [...key].length + [...content].length;
    const search = toTsvector(entryText(key, content), undefined, blindTokensOf(seal));
    return { ...sealed, json: false, sealedChars, search, ...guard };
  }
  return {
    key,
    ...encodeContent(content),
    sealedChars: null,
    search: toTsvector(entryText(key, content)),
    ...guard,
  };
}

/**
 * The blind tokens a search of `label`'s entries also matches: those of each owner of its sealed entries (by their
 * records; one statement over the label's sealed rows), none when none is sealed. Each owner's key, and while a
 * rotation is under way the key it moves from. `DECRYPT_FAILED` for a wrong or missing key. An owner whose key
 * this process has verified costs no statement more.
 */
export async function labelBlinds(query: Query, t: KeyedTables, label: string): Promise<BlindTokens[]> {
  const { keys } = t;
  if (!keys) return [];
  const records = await query<RecordRow>(
    `SELECT DISTINCT session_id, owner FROM ${t.entries} WHERE label = $1 AND sealed_chars IS NOT NULL`,
    [label],
  );
  const owners = new Set<string | null>();
  for (const row of records) owners.add(await rowOwner(query, t, label, keptRecord(row, NO_RECORD)));
  const blinds: BlindTokens[] = [];
  for (const owner of owners) {
    if (owner === null) continue;
    const searchKeys =
      keys.knownSearchKeys(owner) ??
      (await keys.run(query, (k) => k.ownerSearchKeys(owner, `entries of "${label}"`)));
    blinds.push(...searchKeys.map(blindTokensOf));
  }
  return blinds;
}

/** An entry row as read: its columns, `sealed_chars` (non-null: sealed) and its record. */
export interface EntryRow extends RecordRow {
  key: string;
  content: string;
  content_json: boolean;
  sealed_chars: number | null;
}

/**
 * Opens the entries of one label as read, each with its record's owner's key (each record's owner read once): the
 * real key comes back with the content (the row's `key` is a digest of it when sealed, entry-keys.ts).
 */
export function entryOpener(
  query: Query,
  t: KeyedTables,
  label: string,
): (row: EntryRow) => Promise<OpenedEntry> {
  const ownerOf = recordOwners((record) => rowOwner(query, t, label, record));
  return async (row) => {
    const text = decodeContent(row.content, row.content_json);
    if (row.sealed_chars === null) return { key: row.key, content: text };
    return openKeyedEntry(t.keys?.keys, await ownerOf(row), label, row.key, text);
  };
}

/**
 * Writes a row sealed for the owner of the record it keeps, without reading it first: `write(kept)` seals for
 * `kept`, stores `kept` as the record of a new or unrecorded row, and answers false when the row holds another
 * record (its statement's conflict guard, {@link keptGuard}); that row's record is then read (`stored`) and the
 * write sealed again for it. A write recorded as the row is (or of a new or unrecorded row) takes one statement.
 */
export async function writeSealedRow(
  written: RecordColumns,
  write: (kept: RecordColumns) => Promise<boolean>,
  stored: () => Promise<RecordRow | undefined>,
): Promise<void> {
  if (await write(written)) return;
  for (let tries = 1; tries < WRITE_TRIES; tries++) {
    if (await write(keptRecord(await stored(), written))) return;
  }
  throw new SessionError("STORAGE", `The row's record kept changing under ${WRITE_TRIES} writes`);
}

/**
 * The conflict guard of an upsert (`tbl`: the target; `$s`, `$o`: the parameters of the record it writes): the
 * stored row is unrecorded or recorded as the write is, so its content is sealed for the record the row keeps.
 */
export const keptGuard = (tbl: string, s: string, o: string) =>
  `(${tbl}.session_id IS NULL AND ${tbl}.owner IS NULL)
    OR (${tbl}.session_id IS NOT DISTINCT FROM ${s}::text AND ${tbl}.owner IS NOT DISTINCT FROM ${o}::text)`;
