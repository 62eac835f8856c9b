/**
 * What a store's keys know of its sessions apart from the keyring: their owners, the hash each owner's key records
 * are kept under, and the sessions a write found stored in clear — the state the guards of its writes rely on
 * (crypto/write-guard.ts). crypto/content-keys.ts extends it with the keyring, so a write in clear that relies on
 * what it found before (the clear guard its statement carries) runs no encryption code, with a keyring or without.
 */
import type { KeyRecords } from "./crypto/key-records.js";
import type { Keyring } from "./crypto/keyring.js";
import { ownerHash } from "./owner.js";

/** The owners and clear sessions of one store's keys (see the module comment). */
export class SessionOwners {
  // Owners never change once registered, so a session's owner is cached; a session without one is asked again
  // (it may be registered with an owner later, by another process too). A session deleted and created again under
  // its id may have another owner: a write relying on the cached one has its statement compare the session's owner,
  // or reads the owner with the key check (readOwnerCheck), and one that finds another forgets the cached one.
  protected readonly owners = new Map<string, string>();
  // The hash each owner's records are kept under (a SHA-256: ~17 µs, and every write looks its check up).
  protected readonly hashes = new Map<string, string>();
  // Sessions a write found stored in clear, with the owner it found (null: none): an append of such a session reads
  // nothing and its statement requires the owner to be still so and without a recorded key check (knownClear).
  private readonly clear = new Map<string, string | null>();

  constructor(
    readonly keyring: Keyring,
    /** @internal the backend's rows of owners and key checks. */
    readonly records: KeyRecords,
    /** False for a store opened without a keyring (NO_KEYRING): it seals nothing, opens nothing. */
    readonly keyed: boolean,
  ) {}

  /** The owner the session is registered with, or null (an owner found is cached; none is asked again). */
  ownerOf(sessionId: string): string | null {
    const cached = this.owners.get(sessionId);
    if (cached !== undefined) return cached;
    const owner = this.records.ownerOf(sessionId);
    if (owner !== null) this.owners.set(sessionId, owner);
    return owner;
  }

  protected noteClear(sessionId: string, owner: string | null): void {
    if (this.clear.size >= 10_000) this.clear.clear();
    this.clear.set(sessionId, owner);
  }

  /**
   * What a write of the session stored in clear relies on without reading it: the owner a write of this store found
   * (null: none) with no recorded key check, while the keyring still has no key for it; else undefined (the caller
   * calls ContentKeys.keyFor). The write's statement must require both to be still so (another process may have
   * given the owner a key, or the session another owner), and a refused write calls {@link unclear} and keyFor.
   */
  knownClear(sessionId: string): { owner: string | null; ownerHash: string | null } | undefined {
    const owner = this.clear.get(sessionId);
    if (owner === undefined) return undefined;
    if (owner === null) return { owner, ownerHash: null };
    // A keyring that answers a key for the owner now seals its writes: that takes the look-up.
    if (this.keyed && this.keyring.key(owner) !== undefined) return undefined;
    return { owner, ownerHash: this.hashOf(owner) };
  }

  /** Forgets that the session was stored in clear, and its cached owner: a write's clear guard was refused. */
  unclear(sessionId: string): void {
    this.clear.delete(sessionId);
    this.owners.delete(sessionId);
  }

  // A write's cached owner of the session and its recorded check, read at once (records.readOwnerCheck); undefined
  // without one, or when the session has another owner now (deleted and created again under its id): forgotten.
  protected confirmedOwner(sessionId: string): { owner: string; check: string | undefined } | undefined {
    const cached = this.owners.get(sessionId);
    if (cached === undefined || !this.records.readOwnerCheck) return undefined;
    const now = this.records.readOwnerCheck(sessionId, cached, this.hashOf(cached));
    if (now.owner === cached) return { owner: cached, check: now.check };
    this.owners.delete(sessionId);
    return undefined;
  }

  /**
   * Forgets the session's cached owner: a write's guard found the session no longer as this store knew it (deleted
   * and created again under its id, for another owner), so its next look-up reads the owner again.
   */
  forgetOwnerOf(sessionId: string): void {
    this.owners.delete(sessionId);
  }

  protected hashOf(owner: string): string {
    let hash = this.hashes.get(owner);
    if (hash === undefined) {
      hash = ownerHash(owner);
      this.hashes.set(owner, hash);
    }
    return hash;
  }
}
