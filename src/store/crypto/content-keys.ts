/**
 * A store's view of its keyring: which key seals a session's writes, which opens its sealed rows, and the
 * refusals that keep an owner's content from being written in clear or under a wrong key.
 */
import { SessionError } from "../../errors.js";
import { SessionOwners } from "../session-owners.js";
import type { KeyGuard, KeyRecords, SealedWrite, WriteGuard } from "./key-records.js";
import { type Keyring, NO_KEYRING } from "./keyring.js";
import { checkOf, openingKeys, ownerKeys, previousKeyWith } from "./owner-keys.js";
import { type CodecKeys, decode, encode } from "./row-codec.js";
import { type SealedKind, sealedHash } from "./seal.js";

export type { KeyGuard, KeyRecords, SealedWrite, WriteGuard } from "./key-records.js";

/** The keys of one store (see Keyring): seals writes of owners with a key, opens sealed rows. */
export class ContentKeys extends SessionOwners implements CodecKeys {
  // The check a write of this store found recorded for the key it sealed with, by owner hash (knownWriteKey).
  private readonly verified = new Map<string, string>();

  constructor(keyring: Keyring, records: KeyRecords) {
    super(keyring, records, keyring !== NO_KEYRING);
  }

  /**
   * The key that seals the session's writes, or null when they are stored in clear (no owner, or an owner the
   * keyring has no key for and that never had one). `DECRYPT_FAILED` when the keyring answers a key other than
   * the owner's recorded one, or none for an owner whose content is sealed. The recorded check is read on every
   * call (inside the write's transaction), so a rotation another process started is seen at the next write, and a
   * write's cached owner with it where the backend can (readOwnerCheck), so is a session given another owner. A
   * write under a new key whose previous key is the recorded one starts a rotation (docs/PRIVACY.md, "Key
   * rotation"); a read (`write` false) records nothing. `where` names what is written, for the refusals.
   */
  keyFor(sessionId: string, write = true, where = `session "${sessionId}"`): Uint8Array | null {
    const now = write ? this.confirmedOwner(sessionId) : undefined;
    const owner = now ? now.owner : this.ownerOf(sessionId);
    if (owner === null) {
      if (write) this.noteClear(sessionId, null);
      return null;
    }
    const hash = this.hashOf(owner);
    const recorded = now ? now.check : this.records.readCheck(hash);
    const key = this.checkedKey(owner, hash, recorded, write, where);
    // A write's key is the recorded one now (checkedKey checked, recorded or began a rotation to it).
    if (write && key !== null) this.verified.set(hash, checkOf(key));
    if (write && key === null) this.noteClear(sessionId, owner);
    return key;
  }

  /**
   * The key a write of the session seals with and the check it relies on without reading it: answered when a
   * write of this store found that check recorded and the keyring still answers the key it belongs to, else
   * undefined (the caller calls {@link keyFor}). The write's statement must require the check to be still the
   * owner's recorded one (another process may have rotated or erased since), and a refused write calls
   * {@link stale} and {@link keyFor}. An owner stored in clear is never answered: its check is read each time.
   */
  knownWriteKey(sessionId: string): { key: Uint8Array; guard: WriteGuard } | undefined {
    const owner = this.owners.get(sessionId);
    const ownerHash = owner === undefined ? undefined : this.hashes.get(owner);
    const check = ownerHash === undefined ? undefined : this.verified.get(ownerHash);
    if (owner === undefined || ownerHash === undefined || check === undefined) return undefined;
    const key = ownerKeys(this.keyring, owner).current;
    return key !== undefined && checkOf(key) === check
      ? { key, guard: { ownerHash, check, owner } }
      : undefined;
  }

  /**
   * Forgets a check a write's guard found no longer recorded (or the session no longer the guard's owner's: the
   * next {@link keyFor} reads the owner with the check, and forgets it when it changed).
   */
  stale(guard: KeyGuard): void {
    if (this.verified.get(guard.ownerHash) === guard.check) this.verified.delete(guard.ownerHash);
  }

  /**
   * {@link keyFor} of an owner: the key that seals its writes, or null (stored in clear). `where` names what is
   * written, for the refusals.
   */
  ownerKey(owner: string, write = true, where = `owner "${owner}"`): Uint8Array | null {
    const hash = this.hashOf(owner);
    return this.checkedKey(owner, hash, this.records.readCheck(hash), write, where);
  }

  // ownerKey's checks of the keyring's key against the check `recorded` for the owner (its hash `hash`) now.
  private checkedKey(
    owner: string,
    hash: string,
    recorded: string | undefined,
    write: boolean,
    where: string,
  ): Uint8Array | null {
    const keys = ownerKeys(this.keyring, owner);
    const key = keys.current;
    if (key === undefined) {
      if (recorded === undefined) return null;
      throw this.keyed
        ? new SessionError(
            "DECRYPT_FAILED",
            `Owner "${owner}" has encrypted content but the keyring has no key for it (${where})`,
          )
        : keylessRefusal(owner, where);
    }
    const check = checkOf(key);
    if (recorded === check) return key;
    if (recorded === undefined) {
      if (!write || this.records.recordCheck(hash, check) === check) return key;
    } else if (previousKeyWith(keys, recorded) !== undefined && this.records.beginRotation) {
      if (!write) return key;
      const from = this.records.readRotation?.(hash);
      if (from !== undefined) {
        throw new SessionError(
          "CONFLICT",
          `Owner "${owner}" is being rotated to another key: finish that rotation (rekey) before starting one to a third key`,
        );
      }
      if (this.records.beginRotation(hash, recorded, check) === check) return key;
    }
    throw new SessionError(
      "DECRYPT_FAILED",
      `The keyring's key for owner "${owner}" is not the key its content was encrypted with (${where})`,
    );
  }

  /**
   * The keys a search of the session's owner hashes its terms under (the keyed blind index): the current key and,
   * while a rotation is under way, the key it moves from, under which rows not yet re-sealed are still indexed.
   * `DECRYPT_FAILED` as {@link keyFor}, and when the keyring no longer answers the key a rotation moves from.
   */
  searchKeys(sessionId: string): Uint8Array[] {
    const owner = this.ownerOf(sessionId);
    return owner === null ? [] : this.ownerSearchKeys(owner, `session "${sessionId}"`);
  }

  /** {@link searchKeys} of an owner. */
  ownerSearchKeys(owner: string, where = `owner "${owner}"`): Uint8Array[] {
    const hash = this.hashOf(owner);
    // The check and the rotation in one read where the backend has it (a search's statements are few).
    const both = this.records.readChecks?.(hash);
    const recorded = both ? both.check : this.records.readCheck(hash);
    const key = this.checkedKey(owner, hash, recorded, false, where);
    if (key === null) return [];
    // A keyring that answers a new key before its rotation started (at the first write under it, or rekey): the
    // owner's rows are all under the recorded key, one of its previous keys (checkedKey checked that).
    const rotating = both ? both.from : this.records.readRotation?.(hash);
    const from = rotating ?? (recorded === checkOf(key) ? undefined : recorded);
    // A run sealing the owner's rows in clear records a rotation from its key to itself (rotation.ts startSealing).
    if (from === undefined || from === checkOf(key)) return [key];
    const previous = previousKeyWith(ownerKeys(this.keyring, owner), from);
    if (previous === undefined) {
      throw new SessionError(
        "DECRYPT_FAILED",
        `Owner "${owner}" is being rotated from a key the keyring no longer answers in previousKeys: finish the rotation (rekey) before dropping the old key`,
      );
    }
    return [key, previous];
  }

  /** The owner's keys that open its sealed values: the current one, then the previous ones (row-codec.ts). */
  openingKeysOf(owner: string): Uint8Array[] {
    return openingKeys(ownerKeys(this.keyring, owner));
  }

  /** The content and hash to store for a message of the session: sealed under its owner's key, or null (clear). */
  seal(sessionId: string, messageId: string, json: string): SealedWrite | null {
    const key = this.keyFor(sessionId);
    if (key === null) return null;
    const content = encode("message", key, { sessionId, id: messageId }, json);
    return { content, hash: sealedHash(key, json), key };
  }

  /** The summary to store for an overlay of the session: sealed under its owner's key, or null (clear). */
  sealSummary(sessionId: string, overlayId: string, summary: string): string | null {
    const key = this.keyFor(sessionId);
    return key === null ? null : encode("overlay", key, { sessionId, id: overlayId }, summary);
  }

  /**
   * The JSON of stored content: opened when sealed, with the owner's key the content names (current or previous;
   * content sealed before key ids, with whichever of them opens it), else as it is (row-codec.ts decode).
   * `DECRYPT_FAILED` when the keyring holds no such key or it does not open.
   */
  open(
    sessionId: string,
    content: string,
    messageId?: string,
    kind: Exclude<SealedKind, "stream"> = "message",
  ): string {
    return decode(kind, this, undefined, { sessionId, id: messageId }, content);
  }

  /** Destroys the owner's key (the keyring's `forget`) and its record: what was sealed with it opens no more. */
  async forget(owner: string): Promise<void> {
    await this.keyring.forget?.(owner);
    this.verified.delete(this.hashOf(owner));
    this.records.deleteCheck(this.hashOf(owner));
    for (const [sessionId, cached] of this.owners) if (cached === owner) this.owners.delete(sessionId);
  }
}

/**
 * The refusal of a store opened without a keyring, for content (`where`) of an owner with encrypted content (null:
 * sealed content of no owner).
 */
export function keylessRefusal(owner: string | null, where: string): SessionError {
  const whose =
    owner === null ? `The content of ${where} is encrypted` : `Owner "${owner}" has encrypted content`;
  return new SessionError("DECRYPT_FAILED", `${whose} (${where}): open the store with its keyring`);
}
