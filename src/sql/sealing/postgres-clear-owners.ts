/**
 * The key guard of a bulk write in clear on Postgres (an import's batch of a session, a run of imported blocks and
 * entries, an adoption through them): its rows are written many to a statement and carry no guard of their own, so
 * the owners its look-up found without a key are held instead. Each one's advisory lock is taken shared for the
 * rest of the write's transaction (the record of an owner's first key takes it exclusive, postgres-key-snapshot.ts), and only
 * then is the key table read again: a first key committed between the look-up and the lock is seen (the write then
 * looks its key up again, `DECRYPT_FAILED` without it), and one recorded later waits for the write's commit.
 */

import { ownerHash } from "../../store/owner.js";
import type { Query } from "../engines/postgres/client.js";
import { ownerLockSql } from "../engines/postgres/owner-guard.js";
import type { KeyedTables } from "./postgres.js";

/** Whether the owners `hashes` (found without a key) still have none, their locks held for the transaction. */
export async function clearOwnersHold(
  query: Query,
  t: KeyedTables,
  hashes: Iterable<string>,
): Promise<boolean> {
  // In one order, so two writers never wait for each other's locks; the read after them takes a new snapshot.
  const owners = [...new Set(hashes)].sort();
  if (owners.length === 0) return true;
  await query(`SELECT ${ownerLockSql("u.h", true)}::text FROM unnest($1::text[]) AS u(h) ORDER BY u.h`, [
    owners,
  ]);
  const keyed = await query(`SELECT 1 FROM ${t.ownerKeys} WHERE owner_hash = ANY($1::text[]) LIMIT 1`, [
    owners,
  ]);
  return keyed.length === 0;
}

/**
 * The key an import's batch of `sessionId` writes under (null: in clear), looked up afresh in the batch's
 * transaction: in clear for an owner, that owner is held without a key until the batch commits (postgres-clear-owners.ts),
 * else looked up again (`DECRYPT_FAILED` where the store lacks the key recorded meanwhile).
 */
export async function importKey(query: Query, t: KeyedTables, sessionId: string): Promise<Uint8Array | null> {
  const keys = t.keys;
  if (!keys) return null;
  const lookUp = async () =>
    (await keys.guarded(query, (k) => ({ key: k.keyFor(sessionId), owner: k.ownerOf(sessionId) }), true))
      .value;
  const { key, owner } = await lookUp();
  if (key !== null || owner === null || (await clearOwnersHold(query, t, [ownerHash(owner)]))) return key;
  return (await lookUp()).key;
}
