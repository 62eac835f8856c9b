/**
 * Encryption at rest on SQLite (store/crypto): the owner and key-check rows a store's keys read, and the stored
 * form of a message's JSON and of an overlay's summary (sealed for an owner with a key, else as it is).
 */
import { SessionError } from "../errors.js";
import { ContentKeys, type KeyRecords } from "../store/crypto/content-keys.js";
import type { Keyring } from "../store/crypto/keyring.js";
import { isSealed, sealContent, sealedHash } from "../store/crypto/seal.js";
import { contentHash } from "../store/write-policy.js";
import type { SqlDriver } from "./connection/driver.js";
import { readFreeText, storedFreeText } from "./connection/free-text.js";
import { beginRotation, readRotation } from "./rekey-state.js";

/** The keys of a store opened with `keyring`, reading owners and key checks through `driver`. */
export function sqliteKeys(driver: SqlDriver, keyring: Keyring): ContentKeys {
  const records: KeyRecords = {
    ownerOf: (sessionId) =>
      driver.get<{ owner: string | null }>("SELECT owner FROM agent_sessions WHERE id = ?", [sessionId])
        ?.owner ?? null,
    readCheck: (hash) =>
      driver.get<{ key_check: string }>("SELECT key_check FROM agent_owner_keys WHERE owner_hash = ?", [hash])
        ?.key_check,
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
  hash: string;
  sealed: boolean;
  /** The key that sealed it (its blind tokens index the row), when sealed. */
  key?: Uint8Array;
}

/**
 * A message's content column and content hash: sealed under the session owner's key, or the JSON as it is. `key`:
 * the write's key when its caller checked it in this transaction already (one check per write).
 */
export function storedForm(
  driver: SqlDriver,
  sessionId: string,
  messageId: string,
  json: string,
  key?: SealKey,
): StoredForm {
  const sealing = key === undefined ? (driver.keys?.keyFor(sessionId) ?? null) : key;
  if (sealing === null) return { content: json, hash: contentHash(json), sealed: false };
  return {
    content: sealContent(sealing, sessionId, messageId, json),
    hash: sealedHash(sealing, json),
    sealed: true,
    key: sealing,
  };
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
