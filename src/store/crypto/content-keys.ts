/**
 * A store's view of its keyring: which key seals a session's writes, which opens its sealed rows, and the
 * refusals that keep an owner's content from being written in clear or under a wrong key.
 */
import { SessionError } from "../../errors.js";
import { sha256Hex, utf8Encode } from "../../runtime/bytes.js";
import { KEY_BYTES, type Keyring } from "./keyring.js";
import { isSealed, keyCheck, openContent, sealContent, sealedHash } from "./seal.js";

/** What a backend answers synchronously for its {@link ContentKeys}. */
export interface KeyRecords {
  /** The owner a session is registered with, or null. */
  ownerOf(sessionId: string): string | null;
  /** The key check recorded for an owner's hash (see seal.ts keyCheck), or undefined when none is. */
  readCheck(ownerHash: string): string | undefined;
  /**
   * Records an owner's key check unless one is (from then on its content is never written in clear) and answers
   * the check recorded now: another writer's, when it recorded first.
   */
  recordCheck(ownerHash: string, check: string): string;
  /** Removes an owner's key check (its key was destroyed). */
  deleteCheck(ownerHash: string): void;
}

/**
 * The name a key check is recorded under: a hash of the owner id (its first 128 bits, hex), never the id itself
 * (the same value as the search index's owner token, search/owner-token.ts, which store/ may not import).
 */
export function ownerHash(owner: string): string {
  return sha256Hex(utf8Encode(owner)).slice(0, 32);
}

/** A message's content as a store writes it: the text for the content column and its content hash. */
export interface SealedWrite {
  content: string;
  hash: string;
}

/** The keys of one store (see Keyring): seals writes of owners with a key, opens sealed rows. */
export class ContentKeys {
  // Owners never change once registered, so a session's owner is cached; a session without one is asked again
  // (it may be registered with an owner later, by another process too).
  private readonly owners = new Map<string, string>();
  // The key last verified against the owner's recorded check: the same bytes need no HMAC again.
  private readonly verified = new Map<string, Uint8Array>();

  constructor(
    readonly keyring: Keyring,
    private readonly records: KeyRecords,
  ) {}

  private ownerOf(sessionId: string): string | null {
    const cached = this.owners.get(sessionId);
    if (cached !== undefined) return cached;
    const owner = this.records.ownerOf(sessionId);
    if (owner !== null) this.owners.set(sessionId, owner);
    return owner;
  }

  /**
   * The key that seals the session's writes, or null when they are stored in clear (no owner, or an owner the
   * keyring has no key for and that never had one). `DECRYPT_FAILED` when the keyring answers a key other than
   * the owner's recorded one, or none for an owner whose content is sealed. A read (`write` false) records no
   * check: a key never recorded opens nothing it did not seal.
   */
  keyFor(sessionId: string, write = true): Uint8Array | null {
    const owner = this.ownerOf(sessionId);
    if (owner === null) return null;
    const key = this.keyring.key(owner);
    if (key !== undefined && this.verified.get(owner) === key) return key;
    const hash = ownerHash(owner);
    const recorded = this.records.readCheck(hash);
    if (key === undefined) {
      if (recorded === undefined) return null;
      throw new SessionError(
        "DECRYPT_FAILED",
        `Owner "${owner}" has encrypted messages but the keyring has no key for it (session "${sessionId}")`,
      );
    }
    if (!(key instanceof Uint8Array) || key.length !== KEY_BYTES) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `The keyring's key for owner "${owner}" is not ${KEY_BYTES} bytes`,
        {
          issues: [{ path: "keyring.key", rule: "range" }],
        },
      );
    }
    const check = keyCheck(key);
    if (recorded === undefined && !write) return key;
    if ((recorded ?? this.records.recordCheck(hash, check)) !== check) {
      throw new SessionError(
        "DECRYPT_FAILED",
        `The keyring's key for owner "${owner}" is not the key its messages were encrypted with (session "${sessionId}")`,
      );
    }
    this.verified.set(owner, key);
    return key;
  }

  /** The content and hash to store for a message of the session: sealed under its owner's key, or null (clear). */
  seal(sessionId: string, messageId: string, json: string): SealedWrite | null {
    const key = this.keyFor(sessionId);
    if (key === null) return null;
    return { content: sealContent(key, sessionId, messageId, json), hash: sealedHash(key, json) };
  }

  /** The JSON of stored content: opened when sealed (`DECRYPT_FAILED` without the right key), else as it is. */
  open(sessionId: string, content: string, messageId?: string): string {
    if (!isSealed(content)) return content;
    const key = this.keyFor(sessionId, false);
    if (key === null) {
      throw new SessionError(
        "DECRYPT_FAILED",
        `Session "${sessionId}" holds encrypted messages and has no key`,
      );
    }
    return openContent(key, sessionId, content, messageId);
  }

  /** Destroys the owner's key (the keyring's `forget`) and its record: what was sealed with it opens no more. */
  async forget(owner: string): Promise<void> {
    await this.keyring.forget?.(owner);
    this.records.deleteCheck(ownerHash(owner));
    this.verified.delete(owner);
    for (const [sessionId, cached] of this.owners) if (cached === owner) this.owners.delete(sessionId);
  }
}
