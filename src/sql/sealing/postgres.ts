/**
 * Encryption at rest on Postgres (store/crypto): the owner, key-check and rotation rows a store's {@link ContentKeys}
 * read. ContentKeys asks its records synchronously (SQLite answers inside its synchronous transaction); Postgres
 * answers asynchronously, so the records answer from a snapshot loaded for one operation and signal what they miss
 * (postgres-key-snapshot.ts); {@link PostgresKeys.run} loads it through the operation's query function (its transaction, when
 * it runs in one) and runs the operation again. An owner once known and a key check once read are cached
 * (postgres-key-cache.ts), so a write of a session whose owner and key it knows adds no statement: the write then carries the
 * check it relied on as a {@link KeyGuard} that its statement checks against the recorded one (and the session's
 * owner against the one it was sealed for), and a write refused by it (another process rotated the key meanwhile, or
 * deleted the session and created it again for another owner) forgets the cached check and owner and is sealed
 * again (postgres/append.ts).
 * A session a write found stored in clear is remembered too (postgres-key-cache.ts): its next write in clear reads nothing and
 * carries a {@link ClearGuard} instead, refused when the owner has a check recorded since (or the session an owner).
 */
import { SessionError } from "../../errors.js";
import { parseInput } from "../../schema/parse.js";
import { ContentKeys } from "../../store/crypto/content-keys.js";
import { type Keyring, keyringSchema } from "../../store/crypto/keyring.js";
import { ownerHash } from "../../store/owner.js";
import type { Query } from "../engines/postgres/client.js";
import type { Tables } from "../engines/postgres/tables.js";
import { type ClearGuard, KeyCache } from "./postgres-key-cache.js";
import {
  type KeyGuard,
  type KeyTables,
  loadMiss,
  Miss,
  noteCheck,
  noteRotation,
  type Snapshot,
  snapshotRecords,
} from "./postgres-key-snapshot.js";

export type { ClearGuard } from "./postgres-key-cache.js";
export type { KeyGuard } from "./postgres-key-snapshot.js";

/** Sessions' owners and owners' checks (by owner, undefined: none recorded) a caller read already. */
export interface KeySeed {
  owners: [sessionId: string, owner: string][];
  checks: [owner: string, check: string | undefined][];
  /** Owners' unfinished rotations: the check of the key they move from, undefined for none. */
  rotations?: [owner: string, from: string | undefined][];
}

/**
 * The table names with the store's keys, when it was opened with a keyring: they travel with the names, which every
 * row function takes, as SQLite's travel with its driver. The ground floor's {@link Tables} does not know them.
 */
export type KeyedTables = Tables & { keys?: PostgresKeys };

// Loads at most these many misses per operation: an owner, its check, recording a first check, with room to spare.
export const MAX_LOADS = 6;

/** A store's keys on Postgres: {@link ContentKeys} over records loaded per operation (see the module comment). */
export class PostgresKeys {
  readonly keys: ContentKeys;
  private current: Snapshot | undefined;
  private readonly cache = new KeyCache();
  // Owner hashes whose checks ContentKeys.forget deleted: removed from the table by forget() right after.
  private readonly deleted: string[] = [];

  constructor(
    keyring: Keyring,
    private readonly t: KeyTables,
  ) {
    const snapshot = (): Snapshot => {
      if (!this.current) throw new SessionError("STORAGE", "The store's keys were read outside an operation");
      return this.current;
    };
    this.keys = new ContentKeys(keyring, snapshotRecords(snapshot, this.deleted));
  }

  /** False for a store opened without a keyring (NO_KEYRING): it seals nothing and refuses owners with a key. */
  get keyed(): boolean {
    return this.keys.keyed;
  }

  /**
   * Runs `use` (synchronous, free of side effects other than the keys' caches: it may run again) with the keys,
   * loading through `query` whatever the keys' records miss. `seed`: sessions' owners and owners' checks (by owner,
   * undefined: none recorded) the caller read already, so they are not read again.
   */
  async run<T>(query: Query, use: (keys: ContentKeys) => T, seed?: KeySeed): Promise<T> {
    return (await this.guarded(query, use, false, seed)).value;
  }

  /**
   * As {@link run}, also answering the key check the operation relied on (a write's {@link KeyGuard}); `fresh`
   * reads every check and rotation again instead of taking this process's cached ones (a rotation's start).
   */
  async guarded<T>(
    query: Query,
    use: (keys: ContentKeys) => T,
    fresh = false,
    seed?: KeySeed,
  ): Promise<{ value: T; guard: KeyGuard | undefined }> {
    try {
      return await this.attempt(query, use, fresh, seed);
    } catch (error) {
      // A check or rotation this process cached may predate a rotation another process finished, whose old key the
      // keyring has dropped since: read them again once before refusing (a wrong key pays one more look-up).
      if (fresh || !(error instanceof SessionError) || error.code !== "DECRYPT_FAILED") throw error;
      return this.attempt(query, use, true, seed);
    }
  }

  private async attempt<T>(
    query: Query,
    use: (keys: ContentKeys) => T,
    fresh: boolean,
    seed: KeySeed | undefined,
  ): Promise<{ value: T; guard: KeyGuard | undefined }> {
    const { cache } = this;
    const snapshot: Snapshot = {
      owners: new Map(seed?.owners),
      checks: new Map(fresh ? [] : cache.checks()),
      rotations: new Map(fresh ? [] : cache.withoutRotation().map((hash) => [hash, undefined])),
      begun: new Map(),
    };
    for (const [owner, check] of seed?.checks ?? []) noteCheck(snapshot, cache, ownerHash(owner), check);
    for (const [owner, from] of seed?.rotations ?? []) noteRotation(snapshot, cache, ownerHash(owner), from);
    for (let loads = 0; ; loads++) {
      let miss: Miss;
      this.current = snapshot;
      snapshot.used = undefined;
      try {
        const value = use(this.keys);
        return { value, guard: snapshot.used };
      } catch (error) {
        if (!(error instanceof Miss)) throw error;
        // The records kept missing (each load should answer what was missed): a fault of the store, not of the
        // caller, and never the internal signal itself.
        if (loads >= MAX_LOADS) {
          throw new SessionError(
            "STORAGE",
            `The store's keys still missed their records after ${MAX_LOADS} loads (${JSON.stringify(error.need)})`,
          );
        }
        miss = error;
      } finally {
        this.current = undefined;
      }
      await loadMiss(query, this.t, snapshot, cache, miss);
    }
  }

  /**
   * The keys a search of `owner` hashes its terms under, when the keyring's key for it is the one this process
   * read or recorded as the owner's (no statement needed); undefined when that takes a look at the records.
   */
  knownSearchKeys(owner: string): Uint8Array[] | undefined {
    return this.cache.searchKeys(this.keys.keyring, owner);
  }

  /**
   * The guard of a write in clear of the session that reads nothing: answered when a write of this process found
   * the session stored in clear and the keyring still has no key for the owner it found; else undefined (the write
   * looks the owner and its check up, and calls {@link noteClear} when it is in clear).
   */
  knownClear(sessionId: string): ClearGuard | undefined {
    const known = this.cache.clearOf(sessionId);
    if (!known) return undefined;
    // A keyring may answer a key for the owner later: that write is sealed, which takes the look-up.
    if (known.owner !== null && this.keys.keyring.key(known.owner) !== undefined) return undefined;
    return known.guard;
  }

  /** A write found the session stored in clear (its owner: `owner`): the guard its statement carries. */
  noteClear(sessionId: string, owner: string | null): ClearGuard {
    return this.cache.noteClear(sessionId, owner);
  }

  /**
   * Forgets that the session was stored in clear, and its owner: a write's clear guard was refused (the owner has a
   * key check now, or the session another owner).
   */
  unclear(sessionId: string): void {
    this.cache.unclear(sessionId);
    this.keys.forgetOwnerOf(sessionId);
  }

  /**
   * Forgets this process's cached check of an owner and the session's cached owner: a sealed write's guard found
   * another check recorded, or the session no longer that owner's (deleted and created again under its id). Both
   * are read again by the write's next look-up, in the one statement that reads an owner (postgres-key-snapshot.ts).
   */
  stale(sessionId: string, guard: KeyGuard): void {
    this.cache.stale(guard.ownerHash, guard.check);
    this.keys.forgetOwnerOf(sessionId);
  }

  /** Destroys the owner's key (the keyring's `forget`) and removes its check: what it sealed opens no more. */
  async forget(query: Query, owner: string): Promise<void> {
    await this.keys.forget(owner);
    const hashes = this.deleted.splice(0);
    this.cache.forget(hashes);
    await query(`DELETE FROM ${this.t.ownerKeys} WHERE owner_hash = ANY($1::text[])`, [hashes]);
    await query(`DELETE FROM ${this.t.ownerRekeys} WHERE owner_hash = ANY($1::text[])`, [hashes]);
  }
}

/** The keys of a store opened with `keyring` (checked here: an object whose `key` is a function). */
export function postgresKeys(keyring: unknown, t: KeyTables): PostgresKeys {
  parseInput(keyringSchema, keyring, { path: "keyring" });
  return new PostgresKeys(keyring as Keyring, t);
}
