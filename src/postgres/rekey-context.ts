/**
 * Key rotation of an owner's sealed context blocks and search entries on Postgres (rekey.ts re-seals its messages;
 * SQLite's twin is sqlite/rekey-context.ts): in the transaction that ends the rotation, every block and entry
 * sealed under one of the owner's previous keys is opened and sealed again as a write would store it now (under
 * the new key). They are found by the key id their sealed content names (which rows share a key is visible anyway):
 * an owner holds few of them, next to its messages. An entry's search vector is written as a write of it would
 * store it (storedEntry: none for a sealed entry today), so it follows the key with its content.
 */
import { ownerKeys } from "../store/crypto/owner-keys.js";
import { keyId, sealedStart } from "../store/crypto/seal.js";
import type { Query } from "./connection/client.js";
import type { Rotation } from "./rotation.js";
import {
  type BlockRow,
  type EntryRow,
  entryOpener,
  keptRecord,
  NO_RECORD,
  readBlockRow,
  storedBlock,
  storedEntry,
} from "./sealed-context.js";

/**
 * Re-seals the owner's blocks and entries sealed under a previous key (inside the caller's transaction); answers
 * how many rows it wrote. A row written meanwhile (its stored content changed) is left as its writer stored it.
 */
export async function resealContext(query: Query, at: Rotation): Promise<number> {
  const { t } = at;
  const keys = t.keys!;
  let count = 0;
  for (const previous of ownerKeys(keys.keys.keyring, at.owner).previous) {
    const start = sealedStart(keyId(previous));
    const blocks = await query<BlockRow & { key: string }>(
      `SELECT key, content, content_json, sealed, session_id, owner FROM ${t.blocks}
       WHERE sealed AND left(content, $1) = $2`,
      [start.length, start],
    );
    for (const row of blocks) {
      // Sealed again for the owner of the row's own record (a re-seal records nothing).
      const content = await readBlockRow(query, t, row.key, row);
      const stored = await storedBlock(query, t, row.key, content, keptRecord(row, NO_RECORD));
      const done = await query(
        `UPDATE ${t.blocks} SET content = $2, content_json = $3, sealed = $4
         WHERE key = $1 AND content = $5 RETURNING key`,
        [row.key, stored.content, stored.json, stored.sealed, row.content],
      );
      count += done.length;
    }
    const entries = await query<EntryRow & { label: string }>(
      `SELECT label, key, content, content_json, sealed_chars, session_id, owner FROM ${t.entries}
       WHERE sealed_chars IS NOT NULL AND left(content, $1) = $2`,
      [start.length, start],
    );
    for (const row of entries) {
      const content = await entryOpener(query, t, row.label)(row);
      const stored = await storedEntry(query, t, row.label, row.key, content, keptRecord(row, NO_RECORD));
      const done = await query(
        `UPDATE ${t.entries} SET content = $3, content_json = $4, sealed_chars = $5, search = $6::tsvector
         WHERE label = $1 AND key = $2 AND content = $7 RETURNING key`,
        [row.label, row.key, stored.content, stored.json, stored.sealedChars, stored.search, row.content],
      );
      count += done.length;
    }
  }
  return count;
}
