/**
 * What a Postgres store's keys (postgres.ts) remember across operations, so a sealed write or a search of an owner
 * whose key this process knows adds no statement, nor a write in clear of a session found stored in clear: the key
 * checks read or recorded, the owners found with no rotation under way, the sessions found in clear, and owners'
 * hashes.
 */
import type { Keyring } from "../../store/crypto/keyring.js";
import { checkOf, ownerKeys } from "../../store/crypto/owner-keys.js";
import { ownerHash } from "../../store/owner.js";

/**
 * What a write in clear relied on without reading it: the owner it found for the session (its hash; null: the
 * session had none) had no recorded key check. Its statement requires that still (postgres-key-guard.ts).
 */
export interface ClearGuard {
  ownerHash: string | null;
}

/** The caches of one store's keys: checks and "no rotation" by owner hash, and owners' hashes. */
export class KeyCache {
  // Key checks this process has read or recorded, by owner hash: a sealed write needs no statement to read it
  // again, and its guard refuses it when a rotation (or an erasure) changed the check meanwhile.
  private readonly known = new Map<string, string>();
  // Owner hashes this process found no rotation under way for, so a search does not read it again each time. A
  // rotation started elsewhere since changes the recorded check: while this process's cached check is the old one
  // and its keyring answers the new key, ContentKeys takes the cached check as the key moved from, and a write's
  // guard, refused, forgets both (stale). An unfinished rotation is never cached: it ends in another process.
  private readonly noRotation = new Set<string>();
  // Owners' hashes (a SHA-256 each) for searchKeys, which every search of an owner asks.
  private readonly hashes = new Map<string, string>();
  // Sessions a write found stored in clear, with the owner it found (null: none): the next write in clear reads
  // nothing, and its statement requires the owner to be still without a recorded check (postgres-key-guard.ts).
  private readonly clear = new Map<string, { owner: string | null; guard: ClearGuard }>();

  /** The cached checks, by owner hash. */
  checks(): [hash: string, check: string][] {
    return [...this.known];
  }

  /** The owner hashes cached with no rotation under way. */
  withoutRotation(): string[] {
    return [...this.noRotation];
  }

  /** Remembers an owner's check; one without a check is asked again next time (another process may record it). */
  noteCheck(hash: string, check: string | undefined): void {
    if (check !== undefined) this.known.set(hash, check);
  }

  /** Remembers whether an owner has a rotation under way (`from`: the check it moves from). */
  noteRotation(hash: string, from: string | undefined): void {
    if (from === undefined) this.noRotation.add(hash);
    else this.noRotation.delete(hash);
  }

  /** A rotation of the owner began (or was found begun) with `check` as its recorded check. */
  noteBegun(hash: string, check: string): void {
    this.noRotation.delete(hash);
    this.known.set(hash, check);
  }

  /** Forgets the owner's cached check when it is `check` (a write's guard found another), and its "no rotation". */
  stale(hash: string, check: string): void {
    if (this.known.get(hash) === check) this.known.delete(hash);
    this.noRotation.delete(hash);
  }

  /** Remembers that a write of the session found it stored in clear, its owner `owner`; answers the write's guard. */
  noteClear(sessionId: string, owner: string | null): ClearGuard {
    const guard = { ownerHash: owner === null ? null : this.hashOf(owner) };
    if (this.clear.size >= 10_000) this.clear.clear();
    this.clear.set(sessionId, { owner, guard });
    return guard;
  }

  /** The session as a write found it stored in clear ({@link noteClear}), or undefined. */
  clearOf(sessionId: string): { owner: string | null; guard: ClearGuard } | undefined {
    return this.clear.get(sessionId);
  }

  /** Forgets that the session was found stored in clear (a write's guard found it no longer so). */
  unclear(sessionId: string): void {
    this.clear.delete(sessionId);
  }

  /** Forgets the owners' checks (their keys were destroyed). */
  forget(hashes: readonly string[]): void {
    for (const hash of hashes) this.known.delete(hash);
  }

  /**
   * The keys a search of `owner` hashes its terms under, when `keyring`'s key for it is the one cached as the
   * owner's check; undefined when that takes a look at the records.
   */
  searchKeys(keyring: Keyring, owner: string): Uint8Array[] | undefined {
    const { current, previous } = ownerKeys(keyring, owner);
    // Only an owner with one key: during a rotation (the keyring answers previousKeys) rows sealed under the key it
    // moves from are indexed under that key's tokens, which ContentKeys.searchKeys adds.
    if (current === undefined || previous.length > 0) return undefined;
    return this.known.get(this.hashOf(owner)) === checkOf(current) ? [current] : undefined;
  }

  private hashOf(owner: string): string {
    let hash = this.hashes.get(owner);
    if (hash === undefined) {
      hash = ownerHash(owner);
      if (this.hashes.size >= 10_000) this.hashes.clear();
      this.hashes.set(owner, hash);
    }
    return hash;
  }
}
