/**
 * The start of a key rotation (docs/PRIVACY.md, "Key rotation"), the same on every backend: which key the owner's
 * rows move to (the keyring's current key), whether the key they move from is at hand, and the record that starts
 * the rotation. Every refusal comes before anything is written.
 */
import { SessionError } from "../../errors.js";
import { ownerHash } from "../owner.js";
import type { ContentKeys } from "./content-keys.js";
import { checkOf, ownerKeys, previousKeyWith } from "./owner-keys.js";

/** A rotation ready to re-seal rows: the key they move to, and whether an earlier run had started it. */
export interface RotationStart {
  /** The owner's new (current) key. */
  key: Uint8Array;
  /** The name the owner's key check and rotation are recorded under. */
  ownerHash: string;
  /** True when the rotation was under way already (started by an earlier run, or by a write under the new key). */
  resumed: boolean;
}

/**
 * Checks the owner's keys against the recorded ones and starts the rotation when it is not under way: the keyring's
 * `key(owner)` is the new key, one of its `previousKeys(owner)` must be the owner's recorded key (or, resuming, the
 * key the rotation moves from). `DECRYPT_FAILED` for a wrong or missing old key, `NOT_FOUND` for an owner with no
 * encrypted messages, `CONFLICT` when a rotation to another key is under way.
 */
export function startRotation(contentKeys: ContentKeys, owner: string): RotationStart {
  const { records, keyring } = contentKeys;
  if (!records.readRotation || !records.beginRotation) {
    throw new SessionError("UNSUPPORTED", "This store cannot rotate keys");
  }
  const keys = ownerKeys(keyring, owner);
  const key = currentKey(keys.current, owner, "a rotation needs the new key as its key(owner)");
  const hash = ownerHash(owner);
  const recorded = records.readCheck(hash);
  if (recorded === undefined) {
    throw new SessionError(
      "NOT_FOUND",
      `Owner "${owner}" has no encrypted messages: there is no key to rotate`,
    );
  }
  const to = checkOf(key);
  const from = records.readRotation(hash);
  if (recorded === to) {
    // Resuming: the rows not re-sealed yet still need the key they move from.
    if (from !== undefined && from !== to && previousKeyWith(keys, from) === undefined) {
      throw new SessionError(
        "DECRYPT_FAILED",
        `Owner "${owner}" is being rotated to this key from a key the keyring's previousKeys does not hold (a wrong old key)`,
      );
    }
    return { key, ownerHash: hash, resumed: from !== undefined };
  }
  if (from !== undefined) {
    throw new SessionError(
      previousKeyWith(keys, recorded) ? "CONFLICT" : "DECRYPT_FAILED",
      `Owner "${owner}" is being rotated to another key than the keyring's key: finish that rotation first`,
    );
  }
  if (previousKeyWith(keys, recorded) === undefined) {
    throw new SessionError(
      "DECRYPT_FAILED",
      `None of the keyring's previousKeys for owner "${owner}" is the key its messages are encrypted with (a wrong old key)`,
    );
  }
  if (records.beginRotation(hash, recorded, to) !== to) {
    throw new SessionError(
      "CONFLICT",
      `Owner "${owner}" was given another key meanwhile: run the rotation again`,
    );
  }
  return { key, ownerHash: hash, resumed: false };
}

/**
 * The start of a run that also seals the owner's rows in clear (`rekey(owner, { sealClear: true })`): an owner
 * without a recorded key is given the keyring's key (its check recorded, as a first sealed write would), and an
 * owner whose recorded key is the keyring's gets a rotation record from that key to itself, the walk's cursor (reads
 * and searches then use the one key). An owner whose recorded key is a previous one starts (or resumes) a rotation
 * as {@link startRotation}, whose walk seals its clear rows too. Refusals as {@link startRotation}'s, but an owner
 * with nothing recorded is sealed, not `NOT_FOUND`.
 */
export function startSealing(contentKeys: ContentKeys, owner: string): RotationStart {
  const { records, keyring } = contentKeys;
  if (!records.readRotation || !records.beginRotation) {
    throw new SessionError("UNSUPPORTED", "This store cannot seal an owner's rows");
  }
  const key = currentKey(
    ownerKeys(keyring, owner).current,
    owner,
    "sealing its rows needs its key as key(owner)",
  );
  const hash = ownerHash(owner);
  const to = checkOf(key);
  // Another process may record the owner's first key at the same time: the check that won is the one read next.
  const recorded = records.readCheck(hash) ?? records.recordCheck(hash, to);
  if (recorded !== to || records.readRotation(hash) !== undefined) return startRotation(contentKeys, owner);
  if (records.beginRotation(hash, to, to) !== to) {
    throw new SessionError("CONFLICT", `Owner "${owner}" was given another key meanwhile: run it again`);
  }
  return { key, ownerHash: hash, resumed: false };
}

// The owner's current key; `INVALID_ARGUMENT` (at keyring.key) when the keyring answers none, saying what needs it.
function currentKey(key: Uint8Array | undefined, owner: string, need: string): Uint8Array {
  if (key !== undefined) return key;
  throw new SessionError("INVALID_ARGUMENT", `The keyring has no key for owner "${owner}": ${need}`, {
    issues: [{ path: "keyring.key", rule: "required" }],
  });
}
