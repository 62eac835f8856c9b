/**
 * The keys of encryption at rest (docs/PRIVACY.md, "Encryption at rest"): the app's keyring answers an owner's
 * 256-bit key, or none for an owner whose messages are stored in clear.
 */
import { hkdf } from "@noble/hashes/hkdf.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { z } from "zod";
import { SessionError } from "../../errors.js";
import { utf8Encode } from "../../runtime/bytes.js";
import { func } from "../../schema/rules.js";
import { rule } from "../../schema/to-session-error.js";

/**
 * Where a store finds owners' keys. `key` is synchronous because SQLite writes a message inside one synchronous
 * transaction: an app whose keys live in a KMS unwraps an owner's key before using its sessions and answers it
 * from memory. `forget` destroys a key for good (crypto-shredding): erasing an owner calls it.
 */
export interface Keyring {
  /** The owner's 32-byte key, or undefined when that owner's messages are stored in clear. */
  key(owner: string): Uint8Array | undefined;
  /**
   * The owner's earlier keys while a key rotation moves its rows to `key(owner)` (docs/PRIVACY.md, "Key
   * rotation"): rows still sealed under one of them open with it, and the first write under the new key starts
   * the rotation. Drop them once `rekey` reports the rotation complete.
   */
  previousKeys?(owner: string): readonly Uint8Array[];
  /** Destroys the owner's key everywhere the app keeps it, so no copy of the store can be read again. */
  forget?(owner: string): void | Promise<void>;
}

/**
 * The keyring of a store opened without one: it answers no key, so an owner with a recorded key check (content
 * sealed by another store) is refused `DECRYPT_FAILED` on every write and search, as a keyring without its key is,
 * and every other owner is stored in clear.
 */
export const NO_KEYRING: Keyring = Object.freeze({ key: () => undefined });

/** A keyring given as a store's option: an object whose `key` is a function, `forget` a function when given. */
export const keyringSchema = z.looseObject(
  {
    key: func("keyring must be an object with a key(owner) function"),
    forget: func("keyring.forget must be a function when given").optional(),
  },
  rule("keyring must be an object with a key(owner) function"),
);

/** Bytes of an AES-256 key. */
export const KEY_BYTES = 32;

const SALT = utf8Encode("agent-session/owner-key/v1");

/**
 * The key of `owner` derived from `masterKey` with HKDF-SHA256 (the owner id as `info`). A derived key can always
 * be derived again while the master key exists, so such keys cannot be shredded one owner at a time.
 */
export function deriveOwnerKey(masterKey: Uint8Array, owner: string): Uint8Array {
  if (!(masterKey instanceof Uint8Array) || masterKey.length < KEY_BYTES) {
    throw new SessionError("INVALID_ARGUMENT", `A master key must be at least ${KEY_BYTES} bytes`, {
      issues: [{ path: "masterKey", rule: "range" }],
    });
  }
  return hkdf(sha256, masterKey, SALT, utf8Encode(owner), KEY_BYTES);
}

/**
 * A keyring that derives every owner's key from one master key (see {@link deriveOwnerKey}): every owner is
 * encrypted. It has no `forget`: use a keyring of per-owner random keys where erasure must shred.
 * `previousMasterKeys`: the master keys being rotated away from (each owner's previous key is derived from them).
 */
export function masterKeyring(
  masterKey: Uint8Array,
  previousMasterKeys: readonly Uint8Array[] = [],
): Keyring {
  // Checks the keys now, not at the first write.
  for (const master of [masterKey, ...previousMasterKeys]) deriveOwnerKey(master, "");
  const cache = new Map<string, Uint8Array[]>();
  const keys = (owner: string): Uint8Array[] => {
    let derived = cache.get(owner);
    if (!derived) {
      derived = [masterKey, ...previousMasterKeys].map((master) => deriveOwnerKey(master, owner));
      cache.set(owner, derived);
    }
    return derived;
  };
  return {
    key: (owner) => keys(owner)[0],
    ...(previousMasterKeys.length > 0 ? { previousKeys: (owner: string) => keys(owner).slice(1) } : {}),
  };
}
