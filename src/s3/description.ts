/** The custom-metadata field that holds a skill's description (the reference R2 provider's name for it). */
export const DESCRIPTION_FIELD = "description";

/**
 * Descriptions are one-line summaries in the prompt listing; the cap keeps the encoded value well inside the 2 KB that
 * S3 and R2 allow for all custom metadata together (256 code points are at most 1024 UTF-8 bytes, 1368 in base64).
 */
export const MAX_DESCRIPTION_LENGTH = 256;

const ENCODED_WORD = /^=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=$/;

/** Collapses control characters (newlines included) to spaces and trims, so one skill stays one listing line. */
export function cleanDescription(text: string): string {
  let out = "";
  for (const char of text) {
    const code = char.charCodeAt(0);
    out += code < 0x20 || code === 0x7f ? " " : char;
  }
  return out.replace(/ {2,}/g, " ").trim();
}

/** True when the value can travel in an HTTP header as-is and cannot be mistaken for an encoded word. */
function headerSafe(value: string): boolean {
  return /^[\x20-\x7e]*$/.test(value) && value.trim() === value && !value.startsWith("=?");
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * The stored form of a description: cleaned, capped, and when it is not plain printable ASCII, an RFC 2047 encoded
 * word (`=?UTF-8?B?<base64>?=`). S3 metadata travels as HTTP headers, which cannot carry other characters; RFC 2047 is
 * what AWS S3 itself returns for non-ASCII metadata, so values written by other tools decode the same way. Returns
 * undefined when nothing is left to store.
 */
export function encodeDescription(description: string | undefined): string | undefined {
  if (description === undefined) return undefined;
  const clean = [...cleanDescription(description)].slice(0, MAX_DESCRIPTION_LENGTH).join("").trim();
  if (clean === "") return undefined;
  if (headerSafe(clean)) return clean;
  return `=?UTF-8?B?${toBase64(new TextEncoder().encode(clean))}?=`;
}

function decodeWord(charset: string, encoding: string, text: string): string | undefined {
  let bytes: Uint8Array;
  if (encoding.toUpperCase() === "B") {
    try {
      bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    } catch {
      return undefined;
    }
  } else {
    // Q encoding: `_` is a space, `=XX` a byte, everything else itself.
    const out: number[] = [];
    for (let i = 0; i < text.length; i++) {
      const char = text[i]!;
      if (char === "_") out.push(0x20);
      else if (char === "=" && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3))) {
        out.push(Number.parseInt(text.slice(i + 1, i + 3), 16));
        i += 2;
      } else out.push(char.charCodeAt(0));
    }
    bytes = Uint8Array.from(out);
  }
  try {
    return new TextDecoder(charset, { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The readable form of a stored description: RFC 2047 encoded words (one, or several separated by whitespace) are
 * decoded; anything else, including the raw values the reference provider writes, is returned cleaned as it is.
 */
export function decodeDescription(stored: string | undefined): string | undefined {
  if (stored === undefined) return undefined;
  const words = stored.trim().split(/\s+/);
  if (words.every((word) => ENCODED_WORD.test(word))) {
    // Whitespace between adjacent encoded words is not part of the text (RFC 2047 §6.2).
    const parts = words.map((word) => {
      const [, charset, encoding, text] = ENCODED_WORD.exec(word)!;
      return decodeWord(charset!, encoding!, text!);
    });
    if (parts.every((part) => part !== undefined)) return cleanDescription(parts.join("")) || undefined;
  }
  return cleanDescription(stored) || undefined;
}
