import {
  base64DecodeCanonical,
  base64Encode,
  compareUtf8,
  hexDecode,
  sha256Base64url,
  sha256Hex,
  utf8Decode,
  utf8Encode,
  utf8Length,
} from "../../src/runtime/bytes.js";

/** The big message's length in characters: over a Durable Object's 2 MB value limit (a Worker may export only handlers). */
export const BIG_CHARS = 2_500_000;

const PIXELS = Uint8Array.from({ length: 3000 }, (_, i) => (i * 7919) % 256);
/** An inline image large enough to be offloaded to the attachment tables. */
export const IMAGE_URL = `data:image/png;base64,${base64Encode(PIXELS)}`;

const SAMPLES = [
  "",
  "ascii",
  "é ß €",
  "😀 emoji pair",
  "lone \ud800 high",
  "lone \udc00 low",
  "x".repeat(70_000),
];

/**
 * What the byte helpers answer for awkward inputs: run in workerd (Web APIs and @noble/hashes) and in Node
 * (Buffer and node:crypto), the answers must be identical.
 */
export function bytesProbe(): object {
  return {
    lengths: SAMPLES.map(utf8Length),
    encoded: SAMPLES.map((s) => base64Encode(utf8Encode(s)).slice(0, 200)),
    decoded: SAMPLES.map((s) => utf8Decode(utf8Encode(s), 1) === utf8Decode(utf8Encode(s)).slice(1)),
    hashes: SAMPLES.map(sha256Base64url),
    hex: sha256Hex(PIXELS),
    unhexed: [...hexDecode(sha256Hex(PIXELS))],
    canonical: [
      base64DecodeCanonical("aGk="),
      base64DecodeCanonical("aGl="),
      base64DecodeCanonical("a b"),
    ].map((b) => (b ? [...b] : null)),
    order: compareUtf8("\uffff", "😀") < 0,
  };
}
