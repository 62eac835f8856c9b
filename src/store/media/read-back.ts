import { POINTER_PREFIX } from "../../message/media.js";

/**
 * A pointer inside stored JSON (see media.ts), only where a read restores one: the whole string value of a `url`,
 * `data` or `image` key. The opening `[{,]` and quotes are structural (inside a JSON string every quote is
 * escaped), so a text that merely mentions a pointer is not counted as the payload it names. Groups: the original
 * length, and the data-URL header as written in the JSON (escapes included) when the form is one.
 */
const POINTER_IN_JSON =
  /[{,]\s*"(?:url|data|image)"\s*:\s*"(attachment:sha256:[0-9a-f]{64};(\d+);(?:b64|text|(data:(?:[^,"\\]|\\.)*,)))"/g;

/** Length of a data-URL header once its JSON escapes are undone. */
function headerLength(escaped: string): number {
  if (!escaped.includes("\\")) return escaped.length;
  try {
    return (JSON.parse(`"${escaped}"`) as string).length;
  } catch {
    // Stored JSON parses, so its escapes do too; counting them as written is the fallback of a total function.
    return escaped.length;
  }
}

/**
 * The bytes a stored row takes once its offloaded payloads are restored: its stored size, with each pointer
 * replaced by the string it stands for. Read from the stored JSON alone, so a byte budget can be checked before
 * any payload is loaded. Base64 is ASCII and a data URL's header stays in the pointer, so both are exact; a `text`
 * form payload is counted by its characters (its bytes and escapes are only known once it is loaded).
 */
export function readBackBytes(json: string, storedBytes: number): number {
  if (!json.includes(POINTER_PREFIX)) return storedBytes;
  let bytes = storedBytes;
  for (const match of json.matchAll(POINTER_IN_JSON)) {
    const [, pointer = "", chars = "0", header] = match;
    // A header is in both the pointer and the restored string: only the base64 after it is added.
    const restored =
      header === undefined ? Number(chars) : Number(chars) - headerLength(header) + header.length;
    bytes += restored - pointer.length;
  }
  return bytes;
}
