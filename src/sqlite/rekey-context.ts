/**
 * Key rotation of an owner's sealed context blocks and search entries on SQLite (rekey.ts re-seals its messages):
 * at the end of the rotation, in the transaction that ends it, every block and entry sealed under one of the
 * owner's previous keys is opened and sealed again under the current key, and an entry's blind tokens follow the
 * key. They are found by the key id their sealed content names (which rows share a key is visible anyway): an
 * owner holds few of them, next to its messages.
 */
import { ownerKeys } from "../store/crypto/owner-keys.js";
import { keyId, sealedStart } from "../store/crypto/seal.js";
import type { SqlDriver } from "./connection/driver.js";
import { freeTextSql } from "./connection/free-text.js";
import {
  type BlockReadRow,
  type EntryRow,
  entryOpener,
  keptRecord,
  readBlockRow,
  storedBlock,
  storedEntry,
} from "./sealed-context.js";

// A re-seal records nothing: each row is sealed again for the owner of its own record.
const NONE = { sessionId: null, owner: null };

/** Re-seals the owner's blocks and entries sealed under a previous key; how many rows it re-sealed. */
export function resealContext(driver: SqlDriver, owner: string): number {
  const keys = driver.keys;
  if (!keys) return 0;
  let count = 0;
  for (const previous of ownerKeys(keys.keyring, owner).previous) {
    const start = sealedStart(keyId(previous));
    const blocks = driver.all<BlockReadRow & { key: string }>(
      `SELECT key, ${freeTextSql("content", "content")}, sealed, session_id, owner FROM agent_context_blocks
       WHERE sealed IS NOT NULL AND substr(content, 1, ?) = ?`,
      [start.length, start],
    );
    for (const row of blocks) {
      const stored = storedBlock(driver, row.key, readBlockRow(driver, row.key, row), keptRecord(row, NONE));
      driver.run("UPDATE agent_context_blocks SET content = ?, sealed = ? WHERE key = ?", [
        stored.content,
        stored.sealed,
        row.key,
      ]);
      count++;
    }
    const entries = driver.all<EntryRow & { seq: number; label: string; key: string }>(
      `SELECT seq, label, key, ${freeTextSql("content", "content")}, sealed_chars, session_id, owner
       FROM agent_search_entries
       WHERE sealed_chars IS NOT NULL AND substr(content, 1, ?) = ?`,
      [start.length, start],
    );
    for (const row of entries) {
      const content = entryOpener(driver, row.label)(row.key, row);
      const stored = storedEntry(driver, row.label, row.key, content, keptRecord(row, NONE));
      driver.run("UPDATE agent_search_entries SET content = ?, sealed_chars = ? WHERE seq = ?", [
        stored.content,
        stored.sealedChars,
        row.seq,
      ]);
      driver.run("DELETE FROM agent_search_entries_fts WHERE rowid = ?", [row.seq]);
      driver.run("INSERT INTO agent_search_entries_fts (rowid, text) VALUES (?, ?)", [row.seq, stored.text]);
      count++;
    }
  }
  return count;
}
