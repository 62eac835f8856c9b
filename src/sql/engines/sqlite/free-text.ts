/**
 * Free text SQLite cannot hold as is. UTF-8 has no encoding for a lone UTF-16 surrogate, so every driver binds one
 * as U+FFFD: a block, entry or compaction summary ending in half an emoji (`text.slice(0, n)`) came back changed.
 * Such text — and only such text — is stored as a BLOB holding its JSON string literal (`\ud83d`-style escapes);
 * the storage type is the flag, since the library writes nothing else to these columns as a BLOB. Everything else
 * stays TEXT, so the tables stay readable and older readers see what they always saw. Text starting like sealed
 * content (`~sealed`, store/crypto/seal.ts) is stored the same way, so only a TEXT value that starts so is sealed.
 * The Postgres twin, with a flag column, is src/sql/engines/postgres/text.ts; messages need neither, being stored
 * as JSON already.
 */
import { isWellFormed } from "../../../message/ids.js";
import { SEALED_PREFIX } from "../../../message/json.js";
import { utf8Encode } from "../../../runtime/bytes.js";

// A leading U+FEFF is text the user stored, not a byte-order mark to drop.
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Text of a column read as `CAST(col AS BLOB)`. node:sqlite returns TEXT cut at the first U+0000, so columns that
 * may hold arbitrary user text (block content, entries, summaries) are read as bytes and decoded here.
 */
export function sqlText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof Uint8Array) return utf8.decode(value);
  if (value instanceof ArrayBuffer) return utf8.decode(new Uint8Array(value));
  return value === null || value === undefined ? "" : String(value);
}

/** True when `text` is stored as its JSON literal: not well-formed, or read as sealed content if stored as is. */
function needsLiteral(text: string): boolean {
  return !isWellFormed(text) || text.startsWith(SEALED_PREFIX);
}

/**
 * The value to bind for `text`: the text itself, or the UTF-8 bytes of its JSON literal when it is not well-formed
 * or starts like sealed content.
 */
export function storedFreeText(text: string): string | Uint8Array {
  return needsLiteral(text) ? utf8Encode(JSON.stringify(text)) : text;
}

/**
 * The SQL that reads a free-text column for {@link readFreeText}: its storage type, then its bytes (read as bytes,
 * so a leading U+FEFF survives; see sqlText).
 */
export function freeTextSql(column: string, as: string): string {
  return `typeof(${column}) = 'blob' AS ${as}_encoded, CAST(${column} AS BLOB) AS ${as}`;
}

/**
 * The text of a column read through {@link freeTextSql}. A BLOB that does not decode to text needing the encoding
 * was written by something else (a writer that binds bytes): it is returned as its UTF-8 text, as before.
 */
export function readFreeText(value: unknown, encoded: unknown): string {
  const stored = sqlText(value);
  if (encoded !== 1 && encoded !== 1n && encoded !== true) return stored;
  try {
    const text: unknown = JSON.parse(stored);
    if (typeof text === "string" && needsLiteral(text)) return text;
  } catch {
    // Not a JSON literal: bytes from another writer.
  }
  return stored;
}
