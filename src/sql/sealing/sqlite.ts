/**
 * Encryption at rest on SQLite (store/crypto): the owner and key-check rows a store's keys read, and the stored
 * form of a message's JSON and of an overlay's summary (sealed for an owner with a key, else as it is).
 */
import { SessionError } from "../../errors.js";
import { ContentKeys, type KeyRecords } from "../../store/crypto/content-keys.js";
import type { Keyring } from "../../store/crypto/keyring.js";
import { decodeWith, encode } from "../../store/crypto/row-codec.js";
import { isSealed, keyId, sealedHash, sealedStart } from "../../store/crypto/seal.js";
import { contentHash } from "../../store/write-policy.js";
import { contentSql, storedText } from "../engines/sqlite/chunks.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { readFreeText, storedFreeText } from "../engines/sqlite/free-text.js";
import { beginRotation, readRotation } from "../rekey/sqlite-rotation.js";

/** The keys of a store opened with `keyring`, reading owners and key checks through `driver`. */
export function sqliteKeys(driver: SqlDriver, keyring: Keyring): ContentKeys {
  const records: KeyRecords = {
    ownerOf: (sessionId) =>
      driver.get<{ owner: string | null }>("SELECT owner FROM agent_sessions WHERE id = ?", [sessionId])
        ?.owner ?? null,
    readCheck: (hash) =>
      driver.get<{ key_check: string }>("SELECT key_check FROM agent_owner_keys WHERE owner_hash = ?", [hash])
        ?.key_check,
    readOwnerCheck: (sessionId, _owner, hash) => {
      const row = driver.get<{ owner: string | null; key_check: string | null }>(
        `SELECT (SELECT owner FROM agent_sessions WHERE id = ?) AS owner,
           (SELECT key_check FROM agent_owner_keys WHERE owner_hash = ?) AS key_check`,
        [sessionId, hash],
      );
      return { owner: row?.owner ?? null, check: row?.key_check ?? undefined };
    },
    recordCheck: (hash, check) => {
      // Another process may record the owner's first key at the same time: the row that won is the answer.
      driver.run(
        "INSERT INTO agent_owner_keys (owner_hash, key_check) VALUES (?, ?) ON CONFLICT DO NOTHING",
        [hash, check],
      );
      return records.readCheck(hash) ?? check;
    },
    deleteCheck: (hash) =>
      driver.transaction(() => {
        driver.run("DELETE FROM agent_owner_keys WHERE owner_hash = ?", [hash]);
        driver.run("DELETE FROM agent_owner_rekeys WHERE owner_hash = ?", [hash]);
      }),
    readRotation: (hash) => readRotation(driver, hash)?.from_check,
    readChecks: (hash) => {
      const row = driver.get<{ key_check: string | null; from_check: string | null }>(
        `SELECT (SELECT key_check FROM agent_owner_keys WHERE owner_hash = ?) AS key_check,
           (SELECT from_check FROM agent_owner_rekeys WHERE owner_hash = ?) AS from_check`,
        [hash, hash],
      );
      return { check: row?.key_check ?? undefined, from: row?.from_check ?? undefined };
    },
    beginRotation: (hash, from, to) => beginRotation(driver, hash, from, to),
  };
  return new ContentKeys(keyring, records);
}

/**
 * The key a write seals with, checked by the caller inside the write's transaction (ContentKeys.keyFor), or null
 * when the session's writes are stored in clear; undefined where the caller has not checked it (looked up then).
 */
export type SealKey = Uint8Array | null | undefined;

/** A message's content column and content hash, and whether it is sealed (and under which key). */
export interface StoredForm {
  content: string;
  /** Null for a row written without its hash (an append: see {@link storedForm}). */
  hash: string | null;
  sealed: boolean;
  /** The key that sealed it (its blind tokens index the row), when sealed. */
  key?: Uint8Array;
}

/**
 * A message's content column and content hash: sealed under the session owner's key, or the JSON as it is. `key`:
 * the write's key when its caller checked it in this transaction already (one check per write). `hashed` false
 * leaves the hash out (null): an append's row is new, so no write compares with it until the first update, which
 * reads the row instead (writes.ts, {@link storesSame}); the HMAC was a sixth of a sealed append, and a SHA-256 in
 * clear 43 of a Mastra message's ~1,100 bytes on disk (docs/PERFORMANCE.md).
 */
export function storedForm(
  driver: SqlDriver,
  sessionId: string,
  messageId: string,
  json: string,
  key?: SealKey,
  hashed = true,
): StoredForm {
  const sealing = key === undefined ? (driver.keys?.keyFor(sessionId) ?? null) : key;
  if (sealing === null) return { content: json, hash: hashed ? contentHash(json) : null, sealed: false };
  return {
    content: encode("message", sealing, { sessionId, id: messageId }, json),
    hash: hashed ? sealedHash(sealing, json) : null,
    sealed: true,
    key: sealing,
  };
}

/**
 * True when the stored row `seq` of `sessionId` holds what `form` (the same message's new form) would write: by the
 * content hash, or for a row appended without one (null) by reading it: in clear, its text is compared; sealed, it
 * is opened when it is sealed under the key `form` seals with (a row under another key, or in clear while `form`
 * is sealed, or sealed while `form` is clear, is written again and so moves to that key or to clear).
 */
export function storesSame(
  driver: SqlDriver,
  sessionId: string,
  messageId: string,
  row: { seq: number; content_hash: string | null },
  json: string,
  form: StoredForm,
): boolean {
  if (row.content_hash !== null) return row.content_hash === form.hash;
  const selected = driver.get<{ content: unknown }>(
    `SELECT ${contentSql()} AS content FROM agent_messages WHERE seq = ?`,
    [row.seq],
  )?.content;
  const stored = storedText(driver, selected);
  if (!form.key) return !isSealed(stored) && stored === form.content;
  if (!stored.startsWith(sealedStart(keyId(form.key)))) return false;
  return decodeWith("message", form.key, { sessionId, id: messageId }, stored) === json;
}

/** An overlay's summary column: the value to bind, and the sealed text when it is sealed (null: in clear). */
export interface StoredSummary {
  value: string | Uint8Array;
  sealed: string | null;
}

/**
 * The summary column of an overlay of `sessionId`: sealed under its owner's key (bound to the session and the
 * overlay's id), or the free text as it is (free-text.ts).
 */
export function storedSummary(
  driver: SqlDriver,
  sessionId: string,
  overlayId: string,
  summary: string,
): StoredSummary {
  const sealed = driver.keys?.sealSummary(sessionId, overlayId, summary) ?? null;
  return { value: sealed ?? storedFreeText(summary), sealed };
}

/**
 * The summary of an overlay of `sessionId` read through freeTextSql: opened when sealed (a TEXT value starting
 * `~sealed`; clear text that starts so is stored encoded), `DECRYPT_FAILED` without the owner's key.
 */
export function openSummary(
  driver: SqlDriver,
  sessionId: string,
  overlayId: string,
  value: unknown,
  encoded: unknown,
): string {
  const text = readFreeText(value, encoded);
  if (encoded === 1 || encoded === 1n || encoded === true || !isSealed(text)) return text;
  if (!driver.keys) {
    throw new SessionError(
      "DECRYPT_FAILED",
      "This store holds encrypted overlay summaries: open it with the keyring they were written with",
    );
  }
  return driver.keys.open(sessionId, text, overlayId, "overlay");
}
