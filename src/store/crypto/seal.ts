/**
 * Sealed message content: the stored JSON of a message encrypted with AES-256-GCM (runtime/aead.ts: native where
 * Node's crypto is, `@noble/ciphers` in a Worker; synchronous, as SQLite's write path is), under a random 96-bit
 * nonce, with the session id and message id as associated data so a sealed row moved to another session or
 * message id does not open.
 */
import { randomBytes } from "@noble/ciphers/utils.js";
import { SessionError } from "../../errors.js";
import { SEALED_PREFIX } from "../../message/json.js";
import { gcmDecrypt, gcmEncrypt, hmacSha256Hex } from "../../runtime/aead.js";
import { base64DecodeCanonical, base64Encode, utf8Decode, utf8Encode } from "../../runtime/bytes.js";

// Sealed content is `~sealed1:<base64 of nonce, ciphertext and tag>:<message id>` (SEALED_PREFIX: message/json.ts).
const NONCE_BYTES = 12;

/** True when stored content is sealed (see {@link SEALED_PREFIX}). */
export function isSealed(content: string): boolean {
  return content.startsWith(SEALED_PREFIX);
}

function aad(sessionId: string, messageId: string): Uint8Array {
  return utf8Encode(JSON.stringify(["agent-session/sealed1", sessionId, messageId]));
}

/** The sealed form of a message's JSON, bound to its session and id. */
export function sealContent(key: Uint8Array, sessionId: string, messageId: string, json: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const sealed = gcmEncrypt(key, nonce, aad(sessionId, messageId), utf8Encode(json));
  const body = new Uint8Array(NONCE_BYTES + sealed.length);
  body.set(nonce);
  body.set(sealed, NONCE_BYTES);
  return `${SEALED_PREFIX}${base64Encode(body)}:${messageId}`;
}

/**
 * The JSON a sealed content holds; `DECRYPT_FAILED` when the key is not the one it was sealed with, the content
 * was changed, it belongs to another session, or (when `messageId` is given) to another message.
 */
export function openContent(key: Uint8Array, sessionId: string, content: string, messageId?: string): string {
  const colon = content.indexOf(":", SEALED_PREFIX.length);
  const id = colon < 0 ? "" : content.slice(colon + 1);
  const body = colon < 0 ? null : base64DecodeCanonical(content.slice(SEALED_PREFIX.length, colon));
  if (body === null || body.length < NONCE_BYTES + 16) throw decryptFailed(sessionId, id, "is malformed");
  if (messageId !== undefined && id !== messageId) {
    throw decryptFailed(sessionId, messageId, `holds the sealed content of message "${id}"`);
  }
  let plain: Uint8Array;
  try {
    plain = gcmDecrypt(key, body.subarray(0, NONCE_BYTES), aad(sessionId, id), body.subarray(NONCE_BYTES));
  } catch (cause) {
    // GCM's tag check fails alike for a wrong key, changed bytes and a row moved to another session.
    throw decryptFailed(
      sessionId,
      id,
      "does not open with the owner's key (a wrong key, or changed or moved)",
      cause,
    );
  }
  return utf8Decode(plain);
}

function decryptFailed(sessionId: string, id: string, what: string, cause?: unknown): SessionError {
  return new SessionError(
    "DECRYPT_FAILED",
    `The stored content of message "${id}" in session "${sessionId}" ${what}`,
    cause === undefined ? {} : { cause },
  );
}

/**
 * The content hash of a sealed row: HMAC-SHA256 under the owner's key, hex. A plain SHA-256 of the JSON would let
 * anyone holding the file confirm a guessed message; the keyed hash still lets an identical rewrite be skipped.
 */
export function sealedHash(key: Uint8Array, json: string): string {
  return hmacSha256Hex(key, utf8Encode(json));
}

/** The value a store keeps to recognise an owner's key again (a wrong key is refused before anything is written). */
export function keyCheck(key: Uint8Array): string {
  return sealedHash(key, "agent-session/key-check/v1");
}
