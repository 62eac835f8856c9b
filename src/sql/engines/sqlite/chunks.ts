/**
 * Messages larger than one value may hold (a Durable Object caps a string at 2 MB) are stored across continuation
 * rows: the message row keeps its tree columns, an empty `content` and `chunks` = the number of pieces, and
 * `agent_message_chunks(seq, idx, data)` holds the JSON in pieces of at most the limit in UTF-8 bytes, never split
 * inside a surrogate pair. A message that fits (every message on a local file) has `chunks = 0` and no chunk rows,
 * so appends and reads of ordinary messages do exactly what they did before: reads select
 * {@link contentSql}, which yields the content itself, or — for a chunked row only — its `seq`, and
 * {@link resolveContent} then reads just that message's pieces.
 */
import { SessionError } from "../../../errors.js";
import { isWellFormed } from "../../../message/ids.js";
import { utf8Decode, utf8Encode, utf8Length } from "../../../runtime/bytes.js";
import { isSealed } from "../../../store/crypto/seal.js";
import type { SqlDriver } from "./driver.js";

/**
 * Bytes left in a row for everything but the split value (keys, tree columns, hash, record headers); a quarter of
 * the limit when that is smaller (tests lower the limit to a few KB to exercise splitting).
 */
const ROW_HEADROOM = 4096;

/** The content a read selects: the JSON itself, or the row's `seq` when it is split (see resolveContent). */
export function contentSql(alias = ""): string {
  const a = alias === "" ? "" : `${alias}.`;
  return `CASE WHEN ${a}chunks = 0 THEN ${a}content ELSE ${a}seq END`;
}

/**
 * The JSON of a message of `sessionId` from what {@link contentSql} selected: a string as is, a `seq` by reading
 * its pieces; sealed content opened with the owner's key (`DECRYPT_FAILED` without it, or read with no session).
 * `messageId`, when the read knows it, must be the id the content was sealed for.
 */
export function resolveContent(
  driver: SqlDriver,
  selected: unknown,
  sessionId?: string,
  messageId?: string,
): string {
  const content = storedText(driver, selected);
  if (!isSealed(content)) return content;
  if (sessionId === undefined || !driver.keys) {
    throw new SessionError(
      "DECRYPT_FAILED",
      driver.keys
        ? "Encrypted message content was read without its session"
        : "This store holds encrypted messages: open it with the keyring they were written with",
    );
  }
  return driver.keys.open(sessionId, content, messageId);
}

/** What {@link contentSql} selected as it is stored (sealed content stays sealed), pieces joined. */
export function storedText(driver: SqlDriver, selected: unknown): string {
  if (typeof selected === "string") return selected;
  if (typeof selected !== "number" && typeof selected !== "bigint") return "";
  return driver
    .column<string>("SELECT data FROM agent_message_chunks WHERE seq = ? ORDER BY idx", [Number(selected)])
    .join("");
}

/** Largest piece of a value on this connection: the engine's limit less room for the row's other columns. */
export function pieceBytes(driver: SqlDriver): number {
  return driver.maxValueBytes === Number.POSITIVE_INFINITY
    ? Number.POSITIVE_INFINITY
    : driver.maxValueBytes - Math.min(ROW_HEADROOM, Math.floor(driver.maxValueBytes / 4));
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Splits `text` into pieces of at most `maxBytes` UTF-8 bytes each, never between the two halves of a surrogate
 * pair. Joining the pieces gives `text` back exactly. `maxBytes` must be at least 4.
 */
export function splitUtf8(text: string, maxBytes: number): string[] {
  if (text.length * 3 <= maxBytes) return [text];
  // Encoding once and cutting at character starts is ~4× faster than measuring slices; a 4-byte UTF-8 character
  // is a whole surrogate pair, so no cut can separate one. Only text without lone surrogates encodes losslessly.
  if (!isWellFormed(text)) return splitUnits(text, maxBytes);
  const bytes = utf8Encode(text);
  if (bytes.length <= maxBytes) return [text];
  const pieces: string[] = [];
  for (let start = 0; start < bytes.length; ) {
    let end = Math.min(bytes.length, start + maxBytes);
    while (end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end--;
    pieces.push(utf8Decode(bytes, start, end));
    start = end;
  }
  return pieces;
}

/** The splitter for text with lone surrogates (each measured as the 3 bytes of U+FFFD), kept verbatim. */
function splitUnits(text: string, maxBytes: number): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; ) {
    // A UTF-16 unit is at least one byte, so `maxBytes` units are an upper bound; shrink until the piece fits.
    let end = Math.min(text.length, start + maxBytes);
    for (let over = utf8Length(text.slice(start, end)) - maxBytes; over > 0; ) {
      end -= Math.max(1, Math.ceil(over / 3));
      over = utf8Length(text.slice(start, end)) - maxBytes;
    }
    if (end < text.length && end - start > 1 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

/** How a message's JSON is stored: in the row itself, or (`pieces` set) across continuation rows. */
export interface StoredContent {
  /** The `content` column: the JSON, or "" when split. */
  content: string;
  /** The `chunks` column: 0, or the number of pieces. */
  chunks: number;
  pieces: string[] | undefined;
}

/** Decides how `json` is stored on this connection (split only over the value limit). */
export function storedContent(driver: SqlDriver, json: string): StoredContent {
  const limit = pieceBytes(driver);
  if (limit === Number.POSITIVE_INFINITY || json.length * 3 <= limit)
    return { content: json, chunks: 0, pieces: undefined };
  const pieces = splitUtf8(json, limit);
  if (pieces.length === 1) return { content: json, chunks: 0, pieces: undefined };
  return { content: "", chunks: pieces.length, pieces };
}

/**
 * Writes the continuation rows of message `seq` (inside the caller's transaction). Rows a deleted message with
 * a reused `seq` might have left behind are removed first.
 */
export function writeChunks(driver: SqlDriver, seq: number, stored: StoredContent): void {
  if (!stored.pieces) return;
  driver.run("DELETE FROM agent_message_chunks WHERE seq = ?", [seq]);
  stored.pieces.forEach((piece, idx) => {
    driver.run("INSERT INTO agent_message_chunks (seq, idx, data) VALUES (?, ?, ?)", [seq, idx, piece]);
  });
}

/** Removes the continuation rows of one message (nothing for an ordinary one). */
export function deleteChunks(driver: SqlDriver, seq: number): void {
  driver.run("DELETE FROM agent_message_chunks WHERE seq = ?", [seq]);
}

/** Removes the continuation rows of every split message of a session (before its messages are deleted). */
export function deleteSessionChunks(driver: SqlDriver, sessionNum: number): void {
  driver.run(
    "DELETE FROM agent_message_chunks WHERE seq IN (SELECT seq FROM agent_messages WHERE session_num = ? AND chunks > 0)",
    [sessionNum],
  );
}

/** The longest prefix of `text` one value may hold on this connection (the whole text on a local file). */
export function boundedText(driver: SqlDriver, text: string): string {
  const limit = pieceBytes(driver);
  if (limit === Number.POSITIVE_INFINITY || text.length * 3 <= limit) return text;
  // A UTF-16 unit is at least one byte: the first `limit` units hold the whole prefix, so only they are split.
  let head = text.slice(0, limit);
  if (/[\ud800-\udbff]$/.test(head)) head = head.slice(0, -1);
  return splitUtf8(head, limit)[0] ?? "";
}
