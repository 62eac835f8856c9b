/**
 * The key of an owner's keyed blind index (docs/PRIVACY.md, "Encryption at rest"): an encrypted owner's words go
 * into the full-text index as keyed hashes, cut into fixed-width segments (search/blind-tokens.ts builds the
 * tokens from them). The blind key is derived from the owner's key with HKDF, so the key that seals content never
 * keys a hash anyone holding the file can see, and destroying the owner's key leaves the hashes unanswerable.
 */
import { hkdf } from "@noble/hashes/hkdf.js";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { utf8Encode } from "../../runtime/bytes.js";
import { nodeBuiltin } from "../../runtime/load.js";

const SALT = utf8Encode("agent-session/blind-index/v1");

/** Most characters of one segment: 6 base32 characters, 30 bits of the HMAC. */
export const SEGMENT_CHARS = 6;
// Lower-case letters and digits only: SQLite's unicode61 keeps a run of them as one token, and folds nothing in it.
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

type NodeCrypto = typeof import("node:crypto");
let nodeCrypto: NodeCrypto | null | undefined;

/** The owner's blind-index key: HKDF-SHA256 of the owner's key (a salt of its own, so it is no other key). */
export function deriveBlindKey(ownerKey: Uint8Array): Uint8Array {
  return hkdf(sha256, ownerKey, SALT, new Uint8Array(0), 32);
}

/** Keyed segments of one owner's blind index: HMAC-SHA256 under the blind key, up to 30 bits, base32. */
export class BlindHasher {
  private readonly key: Uint8Array;

  constructor(ownerKey: Uint8Array) {
    this.key = deriveBlindKey(ownerKey);
  }

  /**
   * The segment of `text` in the domain `kind` (one letter: a prefix's segments and a whole word's never equal
   * each other's by construction, only by chance), `chars` base32 characters long (5 bits each, at most 6).
   */
  segment(kind: string, text: string, chars = SEGMENT_CHARS): string {
    const data = utf8Encode(`${kind}\u0000${text}`);
    nodeCrypto ??= nodeBuiltin<NodeCrypto>("node:crypto") ?? null;
    const mac = nodeCrypto
      ? nodeCrypto.createHmac("sha256", this.key).update(data).digest()
      : hmac(sha256, this.key, data);
    // The first 5 × chars bits, 5 at a time.
    const bits = ((mac[0]! << 22) | (mac[1]! << 14) | (mac[2]! << 6) | (mac[3]! >>> 2)) >>> 0;
    let out = "";
    for (let shift = 25; shift > 25 - 5 * chars; shift -= 5) out += BASE32[(bits >>> shift) & 31];
    return out;
  }
}
