import { isStorableId } from "../../../message/ids.js";
import { SEALED_PREFIX } from "../../../message/json.js";

/**
 * Text that Postgres cannot store as is. A `text` value cannot hold U+0000 (the server refuses it), and UTF-8 has
 * no encoding for a lone UTF-16 surrogate (the driver would silently write U+FFFD). Free text the library stores
 * verbatim — block and entry content, compaction summaries — is therefore written as its JSON string literal when,
 * and only when, it contains either, with a flag column (`content_json`, `summary_json`) saying so. Everything else
 * is stored as is, so the tables stay readable; either way the text reads back exactly. Text starting like sealed
 * content (`~sealed`, store/crypto/seal.ts) is encoded too, so only an unflagged value that starts so is sealed.
 * Messages need none of this: they are stored as JSON already.
 */

/** True when Postgres text cannot hold `text` unchanged. */
export function needsEncoding(text: string): boolean {
  return !isStorableId(text);
}

/** The stored form of `text` and its flag: the text itself, or its JSON string literal (`\u0000`-style escapes). */
export function encodeContent(text: string): { content: string; json: boolean } {
  return needsLiteral(text) ? { content: JSON.stringify(text), json: true } : { content: text, json: false };
}

function needsLiteral(text: string): boolean {
  return needsEncoding(text) || text.startsWith(SEALED_PREFIX);
}

/**
 * The text of a stored value and its flag. Only text that needed it is ever encoded, so a flagged value that does
 * not decode to such text was overwritten by a writer that does not know the flag (a process still running an
 * older version, which stores text as is and leaves the flag alone): it is returned as stored.
 */
export function decodeContent(content: string, json: boolean): string {
  if (!json) return content;
  try {
    const text: unknown = JSON.parse(content);
    if (typeof text === "string" && needsLiteral(text)) return text;
  } catch {
    // Not a JSON literal: plain text from such a writer.
  }
  return content;
}
