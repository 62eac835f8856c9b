/**
 * Total (never-throwing) serialisation helpers shared by the estimator, the truncator and the prompt builder.
 * Message content comes from models and tools, so it can hold BigInts, cycles or hostile `toJSON`/`toString`
 * methods; none of the utils may crash on such input, they degrade to a weaker rendering instead.
 */

import { parsePointer, slotMediaType } from "./media.js";

/** Finds payload keys in JSON text cheaply, so values without media skip the slower per-value walk. */
export const MAYBE_MEDIA_JSON = /"(?:data|image|url)":"/;

/** `String(value)`, or `""` when even that throws (null-prototype objects, throwing `toString`). */
export function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return "";
  }
}

/** JSON of `value`, `undefined` where JSON has no rendering (undefined, functions, symbols), `String()` when JSON throws. */
export function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    // Circular structures and BigInts cannot be JSON-encoded; a weaker rendering beats an exception.
    return safeString(value);
  }
}

/** The text a value is measured or shown by: strings as they are, anything else as JSON (or `String()`). */
export function renderValue(value: unknown): string {
  if (typeof value === "string") return value;
  return safeJson(value) ?? safeString(value);
}

/** The first `max` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair. */
export function sliceChars(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return "";
  // A lone high surrogate would be re-escaped as `\udXXX` by JSON and render as garbage, so drop it.
  const last = text.charCodeAt(max - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? max - 1 : max;
  return text.slice(0, end);
}

/** What stands for an inline media payload where showing or cutting its base64 would only garble it. */
export function mediaPlaceholder(mediaType: string, value: string): string {
  // A pointer (an offloaded payload not restored) says how long the payload it stands for is.
  return `[${mediaType} omitted: ${parsePointer(value)?.chars ?? value.length} chars]`;
}

/**
 * The media type of `value` under `key` in `holder` when it is an inline media payload (the store's offloading
 * rule, media.ts), else null.
 */
export function mediaTypeAt(holder: unknown, key: string, value: unknown): string | null {
  return typeof value === "string" ? slotMediaType(holder, key, value) : null;
}

/** A `JSON.stringify` replacer that puts a {@link mediaPlaceholder} in place of each inline media payload. */
export function hideMedia(this: unknown, key: string, item: unknown): unknown {
  const mediaType = mediaTypeAt(this, key, item);
  return mediaType === null ? item : mediaPlaceholder(mediaType, item as string);
}

/**
 * JSON of `value` (as {@link safeJson}) with each inline media payload replaced by its {@link mediaPlaceholder}:
 * what a model reading a rendered tool output should get instead of kilobytes of base64.
 */
export function jsonWithoutMedia(value: unknown): string | undefined {
  const json = safeJson(value);
  if (json === undefined || !MAYBE_MEDIA_JSON.test(json)) return json;
  try {
    return JSON.stringify(value, hideMedia);
  } catch {
    // The replacer costs stack per level, so deep nesting plain JSON survived can overflow here: keep that JSON.
    return json;
  }
}
