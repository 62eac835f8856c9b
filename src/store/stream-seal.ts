/**
 * The stored form of a kept stream's chunk (docs/PRIVACY.md, "Streamed answers"): sealed under the session owner's
 * key (AES-256-GCM as a message is, bound to the session, the stream and the chunk's place under a label of its
 * own), or the text as it is, with a leading `~` doubled so a chunk in clear is never read as sealed content.
 */
import { SessionError } from "../errors.js";
import type { ContentKeys } from "./crypto/content-keys.js";
import { isSealed, sealContent } from "./crypto/seal.js";

// The id a sealed chunk is bound to: its place first (a number: no colon), so no other stream id and place agree.
const chunkId = (streamId: string, seq: number) => `${seq}:${streamId}`;

/** The column value of chunk `seq` of `streamId` in `sessionId`: sealed under `key`, or in clear (key null). */
export function storedChunk(
  key: Uint8Array | null,
  sessionId: string,
  streamId: string,
  seq: number,
  chunk: string,
): string {
  if (key !== null) return sealContent(key, sessionId, chunkId(streamId, seq), chunk, "stream");
  return chunk.startsWith("~") ? `~${chunk}` : chunk;
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
  if (stored.startsWith("~~")) return stored.slice(1);
  if (!isSealed(stored)) return stored;
  if (!keys) {
    throw new SessionError("DECRYPT_FAILED", `The stream of session "${sessionId}" is encrypted`);
  }
  return keys.open(sessionId, stored, chunkId(streamId, seq), "stream");
}
