import type { SessionMessage, SessionMessagePart } from "../contract/message.js";
import {
  mediaPlaceholder,
  mediaTypeAt,
  renderValue,
  safeJson,
  safeString,
  sliceChars,
} from "../message/serialize.js";

/**
 * Structure-preserving truncation of tool outputs: strings stay strings, objects objects and arrays arrays, so
 * `toModelOutput` handlers can still replay an older (shortened) result. Sizes are measured like the reference
 * (a string by itself, anything else by its JSON), but tracked incrementally so that a 140k-key object or a huge
 * array costs O(size), not O(size²).
 */

/** Deeper nesting is replaced by a string marker, which also bounds work on cyclic values. */
const MAX_DEPTH = 8;
const TRUNCATED_FLAG = "__truncated";
const TRUNCATED_CHARS = "__truncatedChars";
const OMITTED_NOTE = "Tool output omitted because it was too large to preserve structurally.";

/** What `truncateToolOutput` did. */
export interface TruncatedOutput {
  /** The output itself when it fitted, else a shortened value of the same kind. */
  output: unknown;
  /** True when `output` is not the input value. */
  truncated: boolean;
  /** Measured length of the input (its characters for a string, else of its JSON). */
  originalLength: number;
}

/** Options of `truncateOlderMessages`. */
export interface TruncateOptions {
  /** Number of most recent messages left intact (default 4). */
  keepRecent?: number;
  /** Budget in characters for each tool output of an older message (default 500). */
  maxToolOutputChars?: number;
  /** Longest text part kept whole in an older message (default 10000). */
  maxTextChars?: number;
}

function suffix(originalLength: number): string {
  return `... [truncated ${originalLength} chars]`;
}

/** Length a value is measured by: a string's own length, anything else its JSON length. */
function measure(value: unknown): number {
  return renderValue(value).length;
}

/** Length of a value's JSON as an array item or object value (`undefined` where JSON would omit or null it). */
function jsonLength(value: unknown): number | undefined {
  return safeJson(value)?.length;
}

function truncateString(value: string, maxChars: number, originalLength: number): string {
  if (value.length <= maxChars) return value;
  const marker = suffix(originalLength);
  if (maxChars <= marker.length) return marker.slice(0, maxChars);
  return `${sliceChars(value, maxChars - marker.length)}${marker}`;
}

/** Per-child budget: the whole budget for a single child, else a tenth-or-more share but never under 80 chars. */
function childBudget(maxChars: number, childCount: number): number {
  if (childCount <= 1) return maxChars;
  return Math.max(80, Math.floor(maxChars / Math.min(childCount, 10)));
}

/** Assigns an own property even for keys such as `__proto__`, which plain assignment would not create. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

function objectMarker(maxChars: number, originalLength: number): Record<string, unknown> {
  const marker = { [TRUNCATED_FLAG]: true, [TRUNCATED_CHARS]: originalLength, note: OMITTED_NOTE };
  if (measure(marker) <= maxChars) return marker;
  return { [TRUNCATED_FLAG]: true, [TRUNCATED_CHARS]: originalLength };
}

function arrayMarker(maxChars: number, originalLength: number): unknown[] {
  const structured = [objectMarker(maxChars, originalLength)];
  if (measure(structured) <= maxChars) return structured;
  const text = [
    `Array output omitted because it was too large to preserve structurally ${suffix(originalLength)}`,
  ];
  if (measure(text) <= maxChars) return text;
  return [suffix(originalLength).slice(0, maxChars)];
}

function truncateValue(value: unknown, maxChars: number, originalLength: number, depth: number): unknown {
  // Within budget means untouched, at every level (the reference re-truncated fitting children too).
  if (originalLength <= maxChars) return value;
  if (typeof value === "string") return truncateString(value, maxChars, value.length);
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return `[Nested output omitted ${suffix(originalLength)}]`;
  if (Array.isArray(value)) return truncateArray(value, maxChars, originalLength, depth);
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") {
    // Dates and similar serialise through toJSON; shorten what JSON would actually store.
    let replaced: unknown;
    try {
      replaced = toJSON.call(value);
    } catch {
      replaced = safeString(value);
    }
    return truncateValue(replaced, maxChars, measure(replaced), depth + 1);
  }
  return truncateObject(value as Record<string, unknown>, maxChars, originalLength, depth);
}

function truncateArray(value: unknown[], maxChars: number, originalLength: number, depth: number): unknown[] {
  const budget = childBudget(maxChars, value.length);
  // Every JSON item takes at least one character plus a comma, so items past this index would be dropped anyway.
  const candidates = Math.min(value.length, Math.max(1, Math.floor((maxChars - 1) / 2)));
  const items: unknown[] = [];
  const lengths: number[] = [];
  let total = 2;
  for (let i = 0; i < candidates; i++) {
    const item = truncateValue(value[i], budget, measure(value[i]), depth + 1);
    const length = jsonLength(item) ?? 4; // undefined, functions and symbols become `null` in arrays
    items.push(item);
    lengths.push(length);
    total += length + (i > 0 ? 1 : 0);
  }
  while (items.length > 1 && total > maxChars) {
    items.pop();
    total -= (lengths.pop() ?? 0) + 1;
  }
  if (items.length < value.length) items.push(`Array output truncated ${suffix(originalLength)}`);
  if (measure(items) > maxChars) return arrayMarker(maxChars, originalLength);
  return items;
}

/** Smallest JSON any truncation of these entries could have: keys, colons, commas and a 1-char value each. */
function minimumObjectLength(entries: [string, unknown][]): number {
  let length = 2;
  let kept = 0;
  for (const [key, entry] of entries) {
    if (entry === undefined || typeof entry === "function" || typeof entry === "symbol") continue;
    length += (jsonLength(key) ?? 2) + 2 + (kept > 0 ? 1 : 0);
    kept++;
  }
  return length;
}

/** The keys whose string can be an inline media payload (see message/media.ts). */
const MEDIA_KEYS = ["url", "data", "image"] as const;

/**
 * What replaces an over-budget object holding an inline media payload (a tool's `image-data` item, an MCP image):
 * a text item naming it. Cutting the base64 would leave an item that still declares an image but holds garbage,
 * which a provider rejects when the output is replayed. Null when the object holds no media.
 */
function mediaItem(value: Record<string, unknown>, maxChars: number): Record<string, unknown> | null {
  for (const key of MEDIA_KEYS) {
    const item = value[key];
    const mediaType = mediaTypeAt(value, key, item);
    if (mediaType === null) continue;
    const placeholder = { type: "text", text: mediaPlaceholder(mediaType, item as string) };
    return measure(placeholder) <= maxChars ? placeholder : objectMarker(maxChars, measure(value));
  }
  return null;
}

function truncateObject(
  value: Record<string, unknown>,
  maxChars: number,
  originalLength: number,
  depth: number,
): Record<string, unknown> {
  const media = mediaItem(value, maxChars);
  if (media) return media;
  const entries = Object.entries(value);
  // When even the bare keys cannot fit, every step below would end in the marker: skip straight to it.
  if (minimumObjectLength(entries) > maxChars) return objectMarker(maxChars, originalLength);
  const budget = childBudget(maxChars, entries.length);
  const result: Record<string, unknown> = {};
  // Remember original string lengths so a second cut still reports the size the tool really returned.
  const stringLengths = new Map<string, number>();
  for (const [key, entry] of entries) {
    if (typeof entry === "string") stringLengths.set(key, entry.length);
    setOwn(result, key, truncateValue(entry, budget, measure(entry), depth + 1));
  }
  const resultLength = measure(result);
  if (resultLength <= maxChars) return result;
  if (shrinkStringFields(result, maxChars, resultLength, stringLengths) > maxChars) {
    setOwn(result, TRUNCATED_FLAG, true);
    setOwn(result, TRUNCATED_CHARS, resultLength);
  }
  if (measure(result) > maxChars) return objectMarker(maxChars, originalLength);
  return result;
}

/** Cuts string fields, longest first, to a quarter of the budget until the object fits; returns its new length. */
function shrinkStringFields(
  target: Record<string, unknown>,
  maxChars: number,
  length: number,
  originalLengths: ReadonlyMap<string, number>,
): number {
  const strings = Object.entries(target)
    .filter((entry): entry is [string, string] => typeof entry[1] === "string")
    .sort((a, b) => b[1].length - a[1].length);
  const quarter = Math.max(0, Math.floor(maxChars / 4));
  let current = length;
  for (const [key, text] of strings) {
    if (current <= maxChars) break;
    const shorter = truncateString(text, quarter, originalLengths.get(key) ?? text.length);
    // Track the JSON length by difference instead of re-serialising the whole object per field.
    current += (jsonLength(shorter) ?? 0) - (jsonLength(text) ?? 0);
    setOwn(target, key, shorter);
  }
  return current;
}

/**
 * Shortens a tool output to about `maxChars` characters (of the string, or of the JSON) while keeping its kind:
 * long strings get a `... [truncated N chars]` suffix, objects keep their keys, arrays drop trailing items.
 */
export function truncateToolOutput(output: unknown, maxChars: number): TruncatedOutput {
  const originalLength = measure(output);
  if (originalLength <= maxChars) return { output, truncated: false, originalLength };
  return { output: truncateValue(output, maxChars, originalLength, 0), truncated: true, originalLength };
}

/** A non-negative whole number option, or the default when it is missing or not a number. */
export function countOption(value: unknown, fallback: number): number {
  if (typeof value !== "number" || Number.isNaN(value)) return fallback;
  return Math.max(0, Math.floor(value));
}

function truncatePart(part: unknown, maxToolOutput: number, maxText: number): unknown {
  if (part === null || typeof part !== "object") return part;
  const p = part as SessionMessagePart;
  if (typeof p.type !== "string") return part;
  if ((p.type.startsWith("tool-") || p.type === "dynamic-tool") && p.output !== undefined) {
    const shortened = truncateToolOutput(p.output, maxToolOutput);
    if (shortened.truncated) return { ...p, output: shortened.output };
  }
  if (p.type === "text" && typeof p.text === "string" && p.text.length > maxText) {
    return { ...p, text: `${sliceChars(p.text, maxText)}... [truncated ${p.text.length} chars]` };
  }
  return part;
}

/**
 * Read-time micro-compaction: returns the messages with tool outputs and long texts shortened in all but the
 * last `keepRecent`; never mutates, and every message it does not change keeps its identity.
 */
export function truncateOlderMessages(
  messages: SessionMessage[],
  options?: TruncateOptions,
): SessionMessage[] {
  const keepRecent = countOption(options?.keepRecent, 4);
  const maxToolOutput = countOption(options?.maxToolOutputChars, 500);
  const maxText = countOption(options?.maxTextChars, 10_000);
  if (messages.length <= keepRecent) return messages;
  const cutoff = messages.length - keepRecent;
  return messages.map((message, index) => {
    if (index >= cutoff || message === null || typeof message !== "object" || !Array.isArray(message.parts)) {
      return message;
    }
    let changed = false;
    const parts = message.parts.map((part) => {
      const next = truncatePart(part, maxToolOutput, maxText);
      if (next !== part) changed = true;
      return next as SessionMessagePart;
    });
    return changed ? { ...message, parts } : message;
  });
}
