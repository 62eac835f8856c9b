/**
 * Bytes inside an Agents SDK item (a `Uint8Array` in `providerData`, an image or a file given as raw bytes): JSON
 * has no bytes, so they are stored as `{ "$bytes": "<base64>" }` and read back as a `Uint8Array`, as the SDK's own
 * `MemorySession` keeps them (it clones the item). Nothing else in the item changes.
 */
import { base64DecodeCanonical, base64Encode } from "../runtime/bytes.js";

const TAG = "$bytes";

/** The item with every typed-array view (and ArrayBuffer) replaced by its tagged base64 form; the same object when it has none. */
export function encodeBytes(value: unknown): unknown {
  if (value instanceof Uint8Array) return { [TAG]: base64Encode(value) };
  if (ArrayBuffer.isView(value)) {
    return { [TAG]: base64Encode(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)) };
  }
  if (value instanceof ArrayBuffer) return { [TAG]: base64Encode(new Uint8Array(value)) };
  if (Array.isArray(value)) {
    const mapped = value.map(encodeBytes);
    return mapped.some((entry, i) => entry !== value[i]) ? mapped : value;
  }
  if (typeof value !== "object" || value === null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, entry] of Object.entries(value)) {
    const encoded = encodeBytes(entry);
    if (encoded !== entry) {
      copy ??= { ...(value as Record<string, unknown>) };
      copy[key] = encoded;
    }
  }
  return copy ?? value;
}

/** The stored item with its tagged bytes back as `Uint8Array`s (the same object when it has none). */
export function decodeBytes(value: unknown): unknown {
  if (Array.isArray(value)) {
    const mapped = value.map(decodeBytes);
    return mapped.some((entry, i) => entry !== value[i]) ? mapped : value;
  }
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 1 && keys[0] === TAG && typeof record[TAG] === "string") {
    const bytes = base64DecodeCanonical(record[TAG]);
    // A plain Uint8Array (the decoder may answer a Node Buffer), as the item had it.
    return bytes === null ? value : new Uint8Array(bytes);
  }
  let copy: Record<string, unknown> | undefined;
  for (const key of keys) {
    const decoded = decodeBytes(record[key]);
    if (decoded !== record[key]) {
      copy ??= { ...record };
      copy[key] = decoded;
    }
  }
  return copy ?? value;
}
