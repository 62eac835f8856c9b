/**
 * The snapshot one operation of a Postgres store's keys (postgres.ts) answers from: {@link ContentKeys} asks its
 * records synchronously, so the records here answer from what the operation loaded and signal what they miss (a
 * {@link Miss}), which {@link loadMiss} reads (or records) through the operation's query function before the
 * operation runs again.
 */
import { SessionError } from "../../errors.js";
import type { KeyRecords } from "../../store/crypto/content-keys.js";
import { ownerHash } from "../../store/owner.js";
import type { Query } from "../engines/postgres/client.js";
import { ownerHashSql } from "../engines/postgres/fts.js";
import { ownerLockSql } from "../engines/postgres/owner-guard.js";
import { beginRotation, readRotation } from "../rekey/postgres-rotation.js";
import type { KeyCache } from "./postgres-key-cache.js";

/** The tables the keys read: the registry (owners), the key checks and the rotations. */
export interface KeyTables {
  sessions: string;
  ownerKeys: string;
  ownerRekeys: string;
}

/** The key check a sealed write relied on, which its statement requires to be still the recorded one. */
export interface KeyGuard {
  ownerHash: string;
  check: string;
}

type Need =
  | { owner: string }
  | { check: string }
  | { record: [string, string] }
  | { rotation: string }
  | { begin: [string, string, string] };

/** What the records did not have: a session's owner, an owner's check or rotation, a check to record or change. */
export class Miss {
  constructor(readonly need: Need) {}
}

/**
 * What one operation loaded: owners by session id (null: none), checks and rotations by owner hash (undefined:
 * none), the answers of rotations started, and the last check the operation read (its guard).
 */
export interface Snapshot {
  owners: Map<string, string | null>;
  checks: Map<string, string | undefined>;
  rotations: Map<string, string | undefined>;
  begun: Map<string, string>;
  used?: KeyGuard | undefined;
}

/**
 * The records {@link ContentKeys} reads, answering from the operation's snapshot (`current`, which throws outside
 * one); an owner's deleted check is pushed to `deleted` (removed from the table by the store's forget).
 */
export function snapshotRecords(current: () => Snapshot, deleted: string[]): KeyRecords {
  return {
    ownerOf: (sessionId) => {
      const { owners } = current();
      if (!owners.has(sessionId)) throw new Miss({ owner: sessionId });
      return owners.get(sessionId) ?? null;
    },
    readCheck: (hash) => snapshotCheck(current(), hash),
    readOwnerCheck: (sessionId, owner, hash) => {
      const snapshot = current();
      // A check known unread (cached): the write's statement compares the session's owner (postgres-key-guard.ts). Else the
      // owner is read with the check, in the statement that would have read the check alone (loadMiss), so a write
      // in clear, whose statement carries no guard on a cluster, finds a session given another owner.
      if (snapshot.checks.get(hash) !== undefined) return { owner, check: snapshotCheck(snapshot, hash) };
      if (!snapshot.owners.has(sessionId)) throw new Miss({ owner: sessionId });
      const now = snapshot.owners.get(sessionId) ?? null;
      return { owner: now, check: now === owner ? snapshotCheck(snapshot, hash) : undefined };
    },
    recordCheck: (hash, check) => {
      const snapshot = current();
      const recorded = snapshot.checks.get(hash);
      if (recorded === undefined) throw new Miss({ record: [hash, check] });
      snapshot.used = { ownerHash: hash, check: recorded };
      return recorded;
    },
    deleteCheck: (hash) => {
      deleted.push(hash);
    },
    readRotation: (hash) => {
      const { rotations } = current();
      if (!rotations.has(hash)) throw new Miss({ rotation: hash });
      return rotations.get(hash);
    },
    beginRotation: (hash, from, to) => {
      const snapshot = current();
      const answer = snapshot.begun.get(`${hash} ${from} ${to}`);
      if (answer === undefined) throw new Miss({ begin: [hash, from, to] });
      snapshot.used = { ownerHash: hash, check: answer };
      return answer;
    },
  };
}

// The owner's check (by hash) as the snapshot has it, noted as the operation's guard; a Miss when not loaded.
function snapshotCheck(snapshot: Snapshot, hash: string): string | undefined {
  if (!snapshot.checks.has(hash)) throw new Miss({ check: hash });
  const check = snapshot.checks.get(hash);
  snapshot.used = check === undefined ? undefined : { ownerHash: hash, check };
  return check;
}

/** Notes an owner's check in the snapshot and the cache. */
export function noteCheck(
  snapshot: Snapshot,
  cache: KeyCache,
  hash: string,
  check: string | undefined,
): void {
  snapshot.checks.set(hash, check);
  cache.noteCheck(hash, check);
}

/** Notes whether an owner has a rotation under way in the snapshot and the cache. */
export function noteRotation(
  snapshot: Snapshot,
  cache: KeyCache,
  hash: string,
  from: string | undefined,
): void {
  snapshot.rotations.set(hash, from);
  cache.noteRotation(hash, from);
}

/** Reads (or records) what `need` names into the snapshot (and the cache). */
export async function loadMiss(
  query: Query,
  t: KeyTables,
  snapshot: Snapshot,
  cache: KeyCache,
  { need }: Miss,
): Promise<void> {
  if ("owner" in need) {
    // The owner, its check and any rotation of it in one statement (joined by the owner's hash computed in SQL).
    const [row] = await query<{ owner: string | null; key_check: string | null; from_check: string | null }>(
      `SELECT s.owner, k.key_check, r.from_check FROM ${t.sessions} s
       LEFT JOIN ${t.ownerKeys} k ON k.owner_hash = ${ownerHashSql("s.owner")}
       LEFT JOIN ${t.ownerRekeys} r ON r.owner_hash = k.owner_hash WHERE s.id = $1`,
      [need.owner],
    );
    const owner = row?.owner ?? null;
    snapshot.owners.set(need.owner, owner);
    if (owner !== null) {
      const hash = ownerHash(owner);
      noteCheck(snapshot, cache, hash, row?.key_check ?? undefined);
      noteRotation(snapshot, cache, hash, row?.from_check ?? undefined);
    }
    return;
  }
  if ("check" in need) {
    noteCheck(snapshot, cache, need.check, await readCheck(query, t, need.check));
    return;
  }
  if ("rotation" in need) {
    noteRotation(snapshot, cache, need.rotation, (await readRotation(query, t, need.rotation))?.from_check);
    // Asked while the cached check differs from the keyring's key: the check is read again too (another process
    // may have started this very rotation), and the operation runs again from it.
    noteCheck(snapshot, cache, need.rotation, await readCheck(query, t, need.rotation));
    return;
  }
  if ("begin" in need) {
    const [hash, from, to] = need.begin;
    const answer = await beginRotation(query, t, hash, from, to);
    // The operation runs again from the check it read, and takes the answer where it asks to begin; the next
    // operation starts from the answer.
    snapshot.begun.set(`${hash} ${from} ${to}`, answer);
    cache.noteBegun(hash, answer);
    return;
  }
  // Another process may record the owner's first check at the same time: the row that won is the answer (read
  // again when this statement's snapshot missed a concurrent insert it waited for). Under the owner's lock,
  // exclusive: on a cluster a write in clear of the owner holds it shared from its check to its commit
  // (sql/engines/postgres/owner-guard.ts ownerGuardFunction), so the key is recorded after it or seen by it.
  const [hash, check] = need.record;
  const [row] = await query<{ key_check: string }>(
    `WITH l AS (SELECT ${ownerLockSql("$1::text", false)}::text AS locked), ins AS (
       INSERT INTO ${t.ownerKeys} (owner_hash, key_check) SELECT $1, $2 FROM l ON CONFLICT DO NOTHING RETURNING key_check)
     SELECT key_check FROM ins UNION ALL SELECT key_check FROM ${t.ownerKeys} WHERE owner_hash = $1`,
    [hash, check],
  );
  const recorded = row?.key_check ?? (await readCheck(query, t, hash));
  if (recorded === undefined) {
    throw new SessionError("STORAGE", "The owner's key check was neither recorded nor found");
  }
  noteCheck(snapshot, cache, hash, recorded);
}

async function readCheck(query: Query, t: KeyTables, hash: string): Promise<string | undefined> {
  const [row] = await query<{ key_check: string }>(
    `SELECT key_check FROM ${t.ownerKeys} WHERE owner_hash = $1`,
    [hash],
  );
  return row?.key_check;
}
