/**
 * UTF-8, base64 and SHA-256 over `Uint8Array`, for every runtime: Node's native `Buffer`/`node:crypto` when
 * present (faster), Web APIs and `@noble/hashes` otherwise (a Worker without `nodejs_compat`). Results are
 * identical either way.
 */
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { nodeBuiltin } from "./load.js";

type NodeBuffer = typeof import("node:buffer").Buffer;
type NodeCrypto = typeof import("node:crypto");

const NodeBuf = (globalThis as { Buffer?: NodeBuffer }).Buffer;
let nodeCrypto: NodeCrypto | null | undefined;
const encoder = new TextEncoder();
// A leading U+FEFF is text the user stored, not a byte-order mark to drop.
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

function crypto(): NodeCrypto | null {
  nodeCrypto ??= nodeBuiltin<NodeCrypto>("node:crypto") ?? null;
  return nodeCrypto;
}

/** UTF-8 byte length of a string (lone surrogates count as U+FFFD's 3 bytes), without allocating on Node. */
export function utf8Length(text: string): number {
  if (NodeBuf) return NodeBuf.byteLength(text, "utf8");
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // a pair: 2 units, 4 bytes
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** The UTF-8 bytes of a string. */
export function utf8Encode(text: string): Uint8Array {
  return NodeBuf ? NodeBuf.from(text, "utf8") : encoder.encode(text);
}

/** A string from UTF-8 bytes (a range of them when given). */
export function utf8Decode(bytes: Uint8Array, start = 0, end = bytes.length): string {
  if (NodeBuf)
    return NodeBuf.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8", start, end);
  return decoder.decode(bytes.subarray(start, end));
}

/** Orders strings by their UTF-8 bytes. */
export function compareUtf8(a: string, b: string): number {
  const x = utf8Encode(a);
  const y = utf8Encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

/** Standard base64 (with padding) of bytes. */
export function base64Encode(bytes: Uint8Array): string {
  if (NodeBuf) {
    const buffer =
      bytes instanceof NodeBuf ? bytes : NodeBuf.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return buffer.toString("base64");
  }
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** Bytes of base64 text, or null when it is not exactly the canonical encoding of those bytes. */
export function base64DecodeCanonical(text: string): Uint8Array | null {
  let bytes: Uint8Array;
  if (NodeBuf) bytes = NodeBuf.from(text, "base64");
  else {
    let binary: string;
    try {
      binary = atob(text);
    } catch {
      return null;
    }
    bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  }
  return base64Encode(bytes) === text ? bytes : null;
}

/** Joins byte arrays. */
export function concatBytes(list: readonly Uint8Array[]): Uint8Array {
  if (list.length === 1) return list[0]!;
  const out = new Uint8Array(list.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of list) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** SHA-256 of bytes, hex. */
export function sha256Hex(bytes: Uint8Array): string {
  const node = crypto();
  if (node) return node.createHash("sha256").update(bytes).digest("hex");
  let hex = "";
  for (const byte of nobleSha256(bytes)) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/** SHA-256 of a string's UTF-8, base64url without padding. */
export function sha256Base64url(text: string): string {
  const node = crypto();
  if (node) {
    // One-shot hashing (Node >= 20.12) is about twice as fast as createHash for the small messages appends write.
    const oneShot = (node as { hash?: (algorithm: string, data: string, encoding: "base64url") => string })
      .hash;
    return oneShot
      ? oneShot("sha256", text, "base64url")
      : node.createHash("sha256").update(text).digest("base64url");
  }
  return base64urlEncode(nobleSha256(encoder.encode(text)));
}

/** The bytes of hex text (an even count of hex digits, as a digest answers). */
export function hexDecode(hex: string): Uint8Array {
  if (NodeBuf) return NodeBuf.from(hex, "hex");
  const bytes = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/** Bytes as base64url without padding (RFC 4648 §5). */
export function base64urlEncode(bytes: Uint8Array): string {
  return base64Encode(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
