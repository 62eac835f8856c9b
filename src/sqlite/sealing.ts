/**
 * Encryption at rest on SQLite (store/crypto): the owner and key-check rows a store's keys read, and the stored
 * form of a message's JSON (sealed for an owner with a key, else as it is).
 */
import { ContentKeys, type KeyRecords } from "../store/crypto/content-keys.js";
import type { Keyring } from "../store/crypto/keyring.js";
import { refusePayloadPointer } from "../store/crypto/seal.js";
import { contentHash } from "../store/write-policy.js";
import type { SqlDriver } from "./connection/driver.js";
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

/** A message's content column and content hash, and whether it is sealed. */
export interface StoredForm {
  content: string;
  hash: string;
  sealed: boolean;
}

/** A message's content column and content hash: sealed under the session owner's key, or the JSON as it is. */
export function storedForm(
  driver: SqlDriver,
  sessionId: string,
  messageId: string,
  json: string,
): StoredForm {
  const sealed = driver.keys?.seal(sessionId, messageId, json);
  return sealed
    ? { content: sealed.content, hash: sealed.hash, sealed: true }
    : { content: json, hash: contentHash(json), sealed: false };
}

/**
 * True when the session's writes are sealed. Their media stays inline, inside the sealed content (payload rows
 * are shared and stored in clear), so a string that reads as a payload pointer cannot be stored for them.
 */
export function sealsSession(driver: SqlDriver, sessionId: string, json: string): boolean {
  if (!driver.keys?.keyFor(sessionId)) return false;
  refusePayloadPointer(sessionId, json);
  return true;
}
