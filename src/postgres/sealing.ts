/**
 * Encryption at rest on Postgres (store/crypto): the owner, key-check and rotation rows a store's {@link ContentKeys}
 * read. ContentKeys asks its records synchronously (SQLite answers inside its synchronous transaction); Postgres
 * answers asynchronously, so the records here answer from a snapshot loaded for one operation and signal what they
 * miss (a {@link Miss}); {@link PostgresKeys.run} loads it through the operation's query function (its transaction,
 * when it runs in one) and runs the operation again. An owner once known and a key check once read are cached, so
 * a write of a session whose owner and key it knows adds no statement: the write then carries the check it relied on
 * as a {@link KeyGuard} that its statement checks against the recorded one, and a write refused by it (another
 * process rotated the key meanwhile) forgets the cached check and is sealed again (postgres/append.ts).
 */
import { SessionError } from "../errors.js";
import { ContentKeys, type KeyRecords } from "../store/crypto/content-keys.js";
import type { Keyring } from "../store/crypto/keyring.js";
import { checkOf, ownerHash, ownerKeys } from "../store/crypto/owner-keys.js";
import type { Query } from "./connection/client.js";
import { beginRotation, readRotation } from "./rekey-state.js";
import { ownerHashSql } from "./search/fts.js";

/** The tables the keys read: the registry (owners), the key checks and the rotations. */
interface KeyTables {
  sessions: string;
  ownerKeys: string;
  ownerRekeys: string;
  distributed: boolean;
}

/** Sessions' owners and owners' checks (by owner, undefined: none recorded) a caller read already. */
export interface KeySeed {
  owners: [sessionId: string, owner: string][];
  checks: [owner: string, check: string | undefined][];
  /** Owners' unfinished rotations: the check of the key they move from, undefined for none. */
  rotations?: [owner: string, from: string | undefined][];
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
class Miss {
  constructor(readonly need: Need) {}
}

/**
 * What one operation loaded: owners by session id (null: none), checks and rotations by owner hash (undefined:
 * none), the answers of rotations started, and the last check the operation read (its guard).
 */
interface Snapshot {
  owners: Map<string, string | null>;
  checks: Map<string, string | undefined>;
  rotations: Map<string, string | undefined>;
  begun: Map<string, string>;
  used?: KeyGuard | undefined;
}

// Loads at most these many misses per operation: an owner, its check, recording a first check, with room to spare.
const MAX_LOADS = 6;

/** A store's keys on Postgres: {@link ContentKeys} over records loaded per operation (see the module comment). */
export class PostgresKeys {
  readonly keys: ContentKeys;
  private current: Snapshot | undefined;
  // Key checks this process has read or recorded, by owner hash: a sealed write needs no statement to read it
  // again, and its guard refuses it when a rotation (or an erasure) changed the check meanwhile.
  private readonly known = new Map<string, string>();
  // Owner hashes this process found no rotation under way for, so a search does not read it again each time. A
  // rotation started elsewhere since changes the recorded check: while this process's cached check is the old one
  // and its keyring answers the new key, ContentKeys takes the cached check as the key moved from, and a write's
  // guard, refused, forgets both (stale). An unfinished rotation is never cached: it ends in another process.
  private readonly noRotation = new Set<string>();
  // Owners' hashes (a SHA-256 each) for knownSearchKeys, which every search of an owner asks.
  private readonly hashes = new Map<string, string>();
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
    const records: KeyRecords = {
      ownerOf: (sessionId) => {
        const { owners } = snapshot();
        if (!owners.has(sessionId)) throw new Miss({ owner: sessionId });
        return owners.get(sessionId) ?? null;
      },
      readCheck: (hash) => {
        const current = snapshot();
        if (!current.checks.has(hash)) throw new Miss({ check: hash });
        const check = current.checks.get(hash);
        current.used = check === undefined ? undefined : { ownerHash: hash, check };
        return check;
      },
      recordCheck: (hash, check) => {
        const current = snapshot();
        const recorded = current.checks.get(hash);
        if (recorded === undefined) throw new Miss({ record: [hash, check] });
        current.used = { ownerHash: hash, check: recorded };
        return recorded;
      },
      deleteCheck: (hash) => {
        this.deleted.push(hash);
      },
      readRotation: (hash) => {
        const { rotations } = snapshot();
        if (!rotations.has(hash)) throw new Miss({ rotation: hash });
        return rotations.get(hash);
      },
      beginRotation: (hash, from, to) => {
        const current = snapshot();
        const answer = current.begun.get(`${hash} ${from} ${to}`);
        if (answer === undefined) throw new Miss({ begin: [hash, from, to] });
        current.used = { ownerHash: hash, check: answer };
        return answer;
      },
    };
    this.keys = new ContentKeys(keyring, records);
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
    const snapshot: Snapshot = {
      owners: new Map(seed?.owners),
      checks: new Map(fresh ? [] : this.known),
      rotations: new Map(fresh ? [] : [...this.noRotation].map((hash) => [hash, undefined])),
      begun: new Map(),
    };
    for (const [owner, check] of seed?.checks ?? []) this.note(snapshot, ownerHash(owner), check);
    for (const [owner, from] of seed?.rotations ?? []) this.noteRotation(snapshot, ownerHash(owner), from);
    for (let loads = 0; ; loads++) {
      let miss: Miss;
      this.current = snapshot;
      snapshot.used = undefined;
      try {
        const value = use(this.keys);
        return { value, guard: snapshot.used };
      } catch (error) {
        if (!(error instanceof Miss) || loads >= MAX_LOADS) throw error;
        miss = error;
      } finally {
        this.current = undefined;
      }
      await this.load(query, snapshot, miss);
    }
  }

  private async load(query: Query, snapshot: Snapshot, { need }: Miss): Promise<void> {
    const { t } = this;
    if ("owner" in need) {
      // The owner, its check and any rotation of it in one statement (joined by the owner's hash computed in SQL).
      const [row] = await query<{
        owner: string | null;
        key_check: string | null;
        from_check: string | null;
      }>(
        `SELECT s.owner, k.key_check, r.from_check FROM ${t.sessions} s
         LEFT JOIN ${t.ownerKeys} k ON k.owner_hash = ${ownerHashSql("s.owner")}
         LEFT JOIN ${t.ownerRekeys} r ON r.owner_hash = k.owner_hash WHERE s.id = $1`,
        [need.owner],
      );
      const owner = row?.owner ?? null;
      snapshot.owners.set(need.owner, owner);
      if (owner !== null) {
        const hash = ownerHash(owner);
        this.note(snapshot, hash, row?.key_check ?? undefined);
        this.noteRotation(snapshot, hash, row?.from_check ?? undefined);
      }
      return;
    }
    if ("check" in need) {
      this.note(snapshot, need.check, await this.readCheck(query, need.check));
      return;
    }
    if ("rotation" in need) {
      this.noteRotation(snapshot, need.rotation, (await readRotation(query, t, need.rotation))?.from_check);
      // Asked while the cached check differs from the keyring's key: the check is read again too (another process
      // may have started this very rotation), and the operation runs again from it.
      this.note(snapshot, need.rotation, await this.readCheck(query, need.rotation));
      return;
    }
    if ("begin" in need) {
      const [hash, from, to] = need.begin;
      const answer = await beginRotation(query, t, hash, from, to);
      // The operation runs again from the check it read, and takes the answer where it asks to begin; the next
      // operation starts from the answer.
      snapshot.begun.set(`${hash} ${from} ${to}`, answer);
      this.noRotation.delete(hash);
      this.known.set(hash, answer);
      return;
    }
    // Another process may record the owner's first check at the same time: the row that won is the answer (read
    // again when this statement's snapshot missed a concurrent insert it waited for).
    const [hash, check] = need.record;
    const [row] = await query<{ key_check: string }>(
      `WITH ins AS (
         INSERT INTO ${t.ownerKeys} (owner_hash, key_check) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING key_check)
       SELECT key_check FROM ins UNION ALL SELECT key_check FROM ${t.ownerKeys} WHERE owner_hash = $1`,
      [hash, check],
    );
    const recorded = row?.key_check ?? (await this.readCheck(query, hash));
    if (recorded === undefined) {
      throw new SessionError("STORAGE", "The owner's key check was neither recorded nor found");
    }
    this.note(snapshot, hash, recorded);
  }

  /**
   * The keys a search of `owner` hashes its terms under, when the keyring's key for it is the one this process
   * read or recorded as the owner's (no statement needed); undefined when that takes a look at the records.
   */
  knownSearchKeys(owner: string): Uint8Array[] | undefined {
    const { current, previous } = ownerKeys(this.keys.keyring, owner);
    // Only an owner with one key: during a rotation (the keyring answers previousKeys) rows sealed under the key it
    // moves from are indexed under that key's tokens, which ContentKeys.searchKeys adds.
    if (current === undefined || previous.length > 0) return undefined;
    let hash = this.hashes.get(owner);
    if (hash === undefined) {
      hash = ownerHash(owner);
      if (this.hashes.size >= 10_000) this.hashes.clear();
      this.hashes.set(owner, hash);
    }
    return this.known.get(hash) === checkOf(current) ? [current] : undefined;
  }

  private noteRotation(snapshot: Snapshot, hash: string, from: string | undefined): void {
    snapshot.rotations.set(hash, from);
    if (from === undefined) this.noRotation.add(hash);
    else this.noRotation.delete(hash);
  }

  private note(snapshot: Snapshot, hash: string, check: string | undefined): void {
    snapshot.checks.set(hash, check);
    // An owner without a check is asked again next time: another process may record its first key meanwhile.
    if (check !== undefined) this.known.set(hash, check);
  }

  private async readCheck(query: Query, hash: string): Promise<string | undefined> {
    const [row] = await query<{ key_check: string }>(
      `SELECT key_check FROM ${this.t.ownerKeys} WHERE owner_hash = $1`,
      [hash],
    );
    return row?.key_check;
  }

  /** Forgets this process's cached check of an owner: a write's guard found another one recorded. */
  stale(guard: KeyGuard): void {
    if (this.known.get(guard.ownerHash) === guard.check) this.known.delete(guard.ownerHash);
    this.noRotation.delete(guard.ownerHash);
  }

  /** Destroys the owner's key (the keyring's `forget`) and removes its check: what it sealed opens no more. */
  async forget(query: Query, owner: string): Promise<void> {
    await this.keys.forget(owner);
    const hashes = this.deleted.splice(0);
    for (const hash of hashes) this.known.delete(hash);
    await query(`DELETE FROM ${this.t.ownerKeys} WHERE owner_hash = ANY($1::text[])`, [hashes]);
    await query(`DELETE FROM ${this.t.ownerRekeys} WHERE owner_hash = ANY($1::text[])`, [hashes]);
  }
}

/** The keys of a store opened with `keyring` (checked here: an object whose `key` is a function). */
export function postgresKeys(keyring: unknown, t: KeyTables): PostgresKeys {
  if (typeof keyring !== "object" || keyring === null || typeof (keyring as Keyring).key !== "function") {
    throw new SessionError("INVALID_ARGUMENT", "keyring must be an object with a key(owner) function", {
      issues: [{ path: "keyring", rule: "type" }],
    });
  }
  const forget = (keyring as Keyring).forget;
  if (forget !== undefined && typeof forget !== "function") {
    throw new SessionError("INVALID_ARGUMENT", "keyring.forget must be a function when given", {
      issues: [{ path: "keyring.forget", rule: "type" }],
    });
  }
  return new PostgresKeys(keyring as Keyring, t);
}
