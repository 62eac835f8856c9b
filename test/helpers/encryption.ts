// What the encryption-at-rest tests share: a keyring of per-owner random keys that can forget, and counting a
// known plaintext in a store's files.
import { existsSync, readFileSync } from "node:fs";
import type { Keyring } from "../../src/store/crypto/keyring.js";

/** The plaintext that must never be in the files for an encrypted owner; one word, as the search index keeps terms. */
export const SECRET = "zqxsealedsecretq";

/** A keyring holding one random 32-byte key per owner, like an app's KMS-backed one; `forget` destroys a key. */
export function randomKeyring(owners: readonly string[]): Keyring & { keys: Map<string, Uint8Array> } {
  const keys = new Map(owners.map((owner) => [owner, crypto.getRandomValues(new Uint8Array(32))]));
  return {
    keys,
    key: (owner) => keys.get(owner),
    forget: (owner) => {
      const key = keys.get(owner);
      key?.fill(0);
      keys.delete(owner);
    },
  };
}

/** Occurrences of `text` (as UTF-8) in each of `paths` that exists, summed. */
export function occurrences(paths: readonly string[], text: string): number {
  const needle = Buffer.from(text, "utf8");
  let count = 0;
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const bytes = readFileSync(path);
    for (let at = bytes.indexOf(needle); at >= 0; at = bytes.indexOf(needle, at + 1)) count++;
  }
  return count;
}
