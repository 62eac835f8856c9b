import { POINTER_PREFIX } from "./media.js";

// A pointer inside stored JSON (see media.ts): the original length is the second field.
const POINTER_IN_JSON = /attachment:sha256:[0-9a-f]{64};(\d+);(?:b64|text|data:[^,"]*,)/g;

/**
 * The bytes a stored row takes once its offloaded payloads are restored: its stored size, with each pointer
 * replaced by the length of the string it stands for. Read from the stored JSON alone, so a byte budget can be
 * checked before any payload is loaded. Payloads are base64 or data URLs (ASCII), so characters are bytes.
 */
export function readBackBytes(json: string, storedBytes: number): number {
  if (!json.includes(POINTER_PREFIX)) return storedBytes;
  let bytes = storedBytes;
  for (const match of json.matchAll(POINTER_IN_JSON)) bytes += Number(match[1]) - match[0].length;
  return bytes;
}
