/**
 * What a Postgres store's keys (sealing.ts) remember across operations, so a sealed write or a search of an owner
 * whose key this process knows adds no statement: the key checks read or recorded, the owners found with no
 * rotation under way, and owners' hashes.
 */
import type { Keyring } from "../store/crypto/keyring.js";
import { checkOf, ownerHash, ownerKeys } from "../store/crypto/owner-keys.js";

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
    let hash = this.hashes.get(owner);
    if (hash === undefined) {
      hash = ownerHash(owner);
      if (this.hashes.size >= 10_000) this.hashes.clear();
      this.hashes.set(owner, hash);
    }
    return this.known.get(hash) === checkOf(current) ? [current] : undefined;
  }
}
