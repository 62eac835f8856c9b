/**
 * The stored form of a kept stream's chunk (docs/PRIVACY.md, "Streamed answers"): the row codec's "stream" kind
 * (crypto/row-codec.ts): sealed under the session owner's key (AES-256-GCM as a message is, bound to the session,
 * the stream and the chunk's place under a label of its own), or the text as it is, with a leading `~` doubled so a
 * chunk in clear is never read as sealed content.
 */
import type { ContentKeys } from "./crypto/content-keys.js";
import { decode, encode } from "./crypto/row-codec.js";

/** The column value of chunk `seq` of `streamId` in `sessionId`: sealed under `key`, or in clear (key null). */
export function storedChunk(
  key: Uint8Array | null,
  sessionId: string,
  streamId: string,
  seq: number,
  chunk: string,
): string {
  return encode("stream", key, { sessionId, streamId, seq }, chunk);
}

/**
 * The chunk a stored value holds: opened with the session owner's key when sealed (`DECRYPT_FAILED` without it,
 * or when the value was moved to another session, stream or place), else as written.
 */
export function openedChunk(
  keys: ContentKeys | undefined,
  sessionId: string,
  streamId: string,
  seq: number,
  stored: string,
): string {
  return decode("stream", keys, undefined, { sessionId, streamId, seq }, stored);
}
