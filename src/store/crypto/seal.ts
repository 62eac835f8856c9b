/**
 * Sealed message content: the stored JSON of a message (or an overlay's summary, see {@link SealedKind})
 * encrypted with AES-256-GCM (runtime/aead.ts: native where Node's crypto is, `@noble/ciphers` in a Worker;
 * synchronous, as SQLite's write path is), under a random 96-bit nonce, with the session id and message id (or
 * overlay id) as associated data so a sealed row moved to another session or
 * message id does not open. It names the key that sealed it (a keyed fingerprint, {@link keyId}), so a read
 * during a key rotation knows which of the owner's keys opens it.
 */
import { randomBytes } from "@noble/ciphers/utils.js";
import { SessionError } from "../../errors.js";
import { SEALED_PREFIX } from "../../message/json.js";
import { POINTER_PREFIX } from "../../message/media.js";
import { gcmOpen, gcmSealBase64, hmacSha256Hex } from "../../runtime/aead.js";
import { base64DecodeCanonical, utf8Encode } from "../../runtime/bytes.js";

// Sealed content is `~sealed2:<key id>:<base64 of nonce, ciphertext and tag>:<message id>`; rows written before
// key ids are `~sealed1:<base64>:<message id>` and still open (SEALED_PREFIX, "~sealed": message/json.ts).
const NONCE_BYTES = 12;
const V1 = `${SEALED_PREFIX}1:`;
const V2 = `${SEALED_PREFIX}2:`;
/** Hex characters of a key id: 64 bits, so two keys of one owner never share one. */
const KEY_ID_CHARS = 16;
const KEY_IDS = new WeakMap<Uint8Array, string>();
// Nonces are cut from a pool of random bytes drawn 4 KB at a time: one 12-byte draw from the system's generator
// cost about as much as the AES of a small message. Each pooled byte is used once.
const NONCE_POOL_BYTES = NONCE_BYTES * 341;
let noncePool = new Uint8Array(0);
let nonceAt = 0;

function nextNonce(): Uint8Array {
  if (nonceAt + NONCE_BYTES > noncePool.length) {
    noncePool = randomBytes(NONCE_POOL_BYTES);
    nonceAt = 0;
  }
  nonceAt += NONCE_BYTES;
  return noncePool.subarray(nonceAt - NONCE_BYTES, nonceAt);
}

/**
 * The short id sealed content names its key by: the first 64 bits of an HMAC under the key (hex). It reveals
 * nothing of the key, only which rows share one.
 */
export function keyId(key: Uint8Array): string {
  let id = KEY_IDS.get(key);
  if (id === undefined) {
    id = hmacSha256Hex(key, utf8Encode("agent-session/key-id/v1")).slice(0, KEY_ID_CHARS);
    KEY_IDS.set(key, id);
  }
  return id;
}

/** The start of content sealed under the key `id` (what a rotation's SQL compares a row's first bytes with). */
export function sealedStart(id: string): string {
  return `${V2}${id}:`;
}

/** The id of the key sealed content names, or null for content sealed before key ids were written. */
export function sealedKeyId(content: string): string | null {
  if (!content.startsWith(V2)) return null;
  const colon = content.indexOf(":", V2.length);
  return colon < 0 ? null : content.slice(V2.length, colon);
}

/** True when stored content is sealed: the mark test, kept with the mark (message/json.ts) as it seals nothing. */
export { isSealed } from "../../message/json.js";

/**
 * What sealed content holds: a message's JSON, or an overlay's (compaction's) summary. Each is bound under its own
 * label, so a summary moved into a message row (or back) does not open even where the ids are alike.
 */
export type SealedKind = "message" | "overlay" | "stream" | "name";

// Each kind's label in the associated data, before key ids (1) and with them (2); a stream chunk or a name was never sealed
// before key ids, its label 1 is only what a forged one would be checked under.
const LABELS: Record<SealedKind, [string, string]> = {
  message: ["agent-session/sealed1", "agent-session/sealed2"],
  overlay: ["agent-session/overlay1", "agent-session/overlay2"],
  stream: ["agent-session/stream1", "agent-session/stream2"],
  name: ["agent-session/name1", "agent-session/name2"],
};

// The associated data up to its message id, as JSON and as UTF-8, kept for the last label, key id and session (a
// session's writes and reads come in runs): building it was a fifth of a small message's seal.
let head: { label: string; id: string; sessionId: string; json: string; bytes: Uint8Array } = {
  label: "",
  id: "",
  sessionId: "",
  json: "",
  bytes: new Uint8Array(0),
};
// The whole associated data is written into one reused array: the cipher copies it at once, and a new array for
// each message (its JSON, then its UTF-8) cost ~2 µs of a ~25 µs seal in place (bench/encryption.ts, loaded).
const scratch = new Uint8Array(512);
const utf8 = new TextEncoder();

// The key id is bound too (version 2): a row whose named key was changed does not open under another.
function aad(sessionId: string, messageId: string, id: string | null, kind: SealedKind): Uint8Array {
  if (id === null) return utf8Encode(JSON.stringify([LABELS[kind][0], sessionId, messageId]));
  const label = LABELS[kind][1];
  if (head.label !== label || head.id !== id || head.sessionId !== sessionId) {
    // The same bytes as JSON.stringify([label, id, sessionId, messageId]): the array's JSON without its "]".
    const json = `${JSON.stringify([label, id, sessionId]).slice(0, -1)},`;
    head = { label, id, sessionId, json, bytes: utf8Encode(json) };
  }
  const tail = `${JSON.stringify(messageId)}]`;
  // At most 3 bytes per UTF-16 unit: a tail that might not fit takes the array of its own.
  if (head.bytes.length + tail.length * 3 > scratch.length) return utf8Encode(`${head.json}${tail}`);
  scratch.set(head.bytes);
  const { written } = utf8.encodeInto(tail, scratch.subarray(head.bytes.length));
  return scratch.subarray(0, head.bytes.length + written);
}

/** The sealed form of a message's JSON (or an overlay's summary), bound to its session and id, naming its key. */
export function sealContent(
  key: Uint8Array,
  sessionId: string,
  messageId: string,
  json: string,
  kind: SealedKind = "message",
): string {
  const id = keyId(key);
  const body = gcmSealBase64(key, nextNonce(), aad(sessionId, messageId, id, kind), json);
  return `${sealedStart(id)}${body}:${messageId}`;
}

/**
 * The JSON a sealed content holds; `DECRYPT_FAILED` when the key is not the one it was sealed with, the content
 * was changed, it belongs to another session, or (when `messageId` is given) to another message.
 */
export function openContent(
  key: Uint8Array,
  sessionId: string,
  content: string,
  messageId?: string,
  kind: SealedKind = "message",
): string {
  const named = sealedKeyId(content);
  const start = named === null ? (content.startsWith(V1) ? V1.length : -1) : sealedStart(named).length;
  const colon = start < 0 ? -1 : content.indexOf(":", start);
  const id = colon < 0 ? "" : content.slice(colon + 1);
  const body = colon < 0 ? null : base64DecodeCanonical(content.slice(start, colon));
  if (body === null || body.length < NONCE_BYTES + 16)
    throw decryptFailed(kind, sessionId, id, "is malformed");
  if (messageId !== undefined && id !== messageId) {
    throw decryptFailed(kind, sessionId, messageId, `holds the sealed content of ${kind} "${id}"`);
  }
  try {
    return gcmOpen(
      key,
      body.subarray(0, NONCE_BYTES),
      aad(sessionId, id, named, kind),
      body.subarray(NONCE_BYTES),
    );
  } catch (cause) {
    // GCM's tag check fails alike for a wrong key, changed bytes and a row moved to another session.
    throw decryptFailed(
      kind,
      sessionId,
      id,
      "does not open with the owner's key (a wrong key, or changed or moved)",
      cause,
    );
  }
}

function decryptFailed(
  kind: SealedKind,
  sessionId: string,
  id: string,
  what: string,
  cause?: unknown,
): SessionError {
  const of = {
    message: "content of message",
    overlay: "summary of overlay",
    stream: "chunk of stream",
    name: "name of session",
  }[kind];
  return new SessionError(
    "DECRYPT_FAILED",
    `The stored ${of} "${id}" in session "${sessionId}" ${what}`,
    cause === undefined ? {} : { cause },
  );
}

/**
 * The content hash of a sealed row: HMAC-SHA256 under the owner's key, hex. A plain SHA-256 of the JSON would let
 * anyone holding the file confirm a guessed message; the keyed hash still lets an identical rewrite be skipped.
 */
export function sealedHash(key: Uint8Array, json: string): string {
  return hmacSha256Hex(key, json);
}

/** The value a store keeps to recognise an owner's key again (a wrong key is refused before anything is written). */
export function keyCheck(key: Uint8Array): string {
  return sealedHash(key, "agent-session/key-check/v1");
}

/**
 * Refuses a sealed message holding a string that reads as a payload pointer: an encrypted owner's media stays inline,
 * inside the sealed content (payload rows are shared and stored in clear), so such a string would be taken for a
 * pointer on reading.
 */
export function refusePayloadPointer(sessionId: string, json: string): void {
  if (!json.includes(POINTER_PREFIX)) return;
  throw new SessionError(
    "INVALID_MESSAGE",
    `A message of session "${sessionId}" (an encrypted owner) cannot hold a payload pointer ("${POINTER_PREFIX}…")`,
    { issues: [{ path: "parts", rule: "invalid" }] },
  );
}
