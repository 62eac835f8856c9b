/**
 * An owner's keys as the keyring answers them: the current key that seals writes and the previous keys a key
 * rotation still opens rows with (docs/PRIVACY.md, "Key rotation"), each checked to be a 32-byte key.
 */
import { SessionError } from "../../errors.js";
import { KEY_BYTES, type Keyring } from "./keyring.js";
import { keyCheck } from "./seal.js";

/** The current key (undefined: the owner is stored in clear) and the previous keys, current first when both. */
export interface OwnerKeys {
  current: Uint8Array | undefined;
  previous: Uint8Array[];
}

// A check is an HMAC: the same key bytes (the keyring answers the same object each time) need it once.
const CHECKS = new WeakMap<Uint8Array, string>();

/** The key check of `key` (seal.ts keyCheck), computed once per key object. */
export function checkOf(key: Uint8Array): string {
  let check = CHECKS.get(key);
  if (check === undefined) {
    check = keyCheck(key);
    CHECKS.set(key, check);
  }
  return check;
}

// Hand-written: it checks what the keyring answered, on the path of every sealed write, not a caller's input.
function assertKey(key: unknown, owner: string, path: string): asserts key is Uint8Array {
  if (!(key instanceof Uint8Array) || key.length !== KEY_BYTES) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `The keyring's ${path} for owner "${owner}" is not ${KEY_BYTES} bytes`,
      {
        issues: [{ path: `keyring.${path}`, rule: "range" }],
      },
    );
  }
}

/** The owner's keys; `INVALID_ARGUMENT` when the keyring answers something that is not a 32-byte key. */
export function ownerKeys(keyring: Keyring, owner: string): OwnerKeys {
  const current = keyring.key(owner);
  if (current !== undefined) assertKey(current, owner, "key");
  const answered = keyring.previousKeys?.(owner) ?? [];
  if (!Array.isArray(answered)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `The keyring's previousKeys for owner "${owner}" is not an array`,
      {
        issues: [{ path: "keyring.previousKeys", rule: "type" }],
      },
    );
  }
  const previous: Uint8Array[] = [];
  for (const key of answered as unknown[]) {
    assertKey(key, owner, "previousKeys");
    if (key !== current) previous.push(key);
  }
  return { current, previous };
}

/** The keys a read may open the owner's rows with: the current one first, then the previous ones. */
export function openingKeys(keys: OwnerKeys): Uint8Array[] {
  return keys.current === undefined ? keys.previous : [keys.current, ...keys.previous];
}

/** The previous key whose check is `check`, if the keyring answers it. */
export function previousKeyWith(keys: OwnerKeys, check: string): Uint8Array | undefined {
  return keys.previous.find((key) => checkOf(key) === check);
}
