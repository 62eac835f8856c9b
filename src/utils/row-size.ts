import type { SessionMessage, SessionMessagePart } from "../contract/message.js";
import { safeString, sliceChars } from "../message/serialize.js";
import { utf8Length } from "../runtime/bytes.js";
import { truncateToolOutput } from "./truncate.js";

/**
 * The reference's row budget in UTF-8 bytes of a message's JSON. A read-time budget only: stores keep messages of
 * any size whole (they are never truncated on write); use it to shrink what is sent to a model.
 */
export const ROW_MAX_BYTES = 1_800_000;

/** Each answered tool output of an oversized assistant message is cut to this many characters. */
const TOOL_OUTPUT_CHARS = 1000;
/** Text parts up to this length are never truncated for storage. */
const TEXT_PART_CHARS = 1000;
/** How much of a truncated text part is kept in its marker. */
const TEXT_PREVIEW_CHARS = 500;

/** UTF-8 size of a value's JSON, or undefined when it cannot be serialised (cycles, BigInt). */
function jsonBytes(value: unknown): number | undefined {
  const json = jsonOf(value);
  return json === undefined ? undefined : utf8Length(json);
}

/** A value's JSON, or undefined when it cannot be serialised (cycles, BigInt). */
function jsonOf(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/**
 * Adds `ids` to the list under `key` of the message's metadata, keeping every existing field and any marks a
 * previous enforcement left. Metadata that is not a plain object cannot take a mark and is kept as it is.
 */
function withMarks(message: SessionMessage, key: string, ids: readonly (string | number)[]): SessionMessage {
  const metadata = message.metadata;
  if (
    metadata !== undefined &&
    metadata !== null &&
    (typeof metadata !== "object" || Array.isArray(metadata))
  ) {
    return message;
  }
  const existing = (metadata as Record<string, unknown> | null | undefined)?.[key];
  const merged = Array.isArray(existing) ? [...existing] : [];
  for (const id of ids) if (!merged.includes(id)) merged.push(id);
  return { ...message, metadata: { ...(metadata ?? {}), [key]: merged } };
}

/** Truncates every answered tool output to 1000 characters, keeping its structure, and marks the call ids. */
function compactToolOutputs(message: SessionMessage): SessionMessage {
  const compacted: string[] = [];
  const parts = message.parts.map((part) => {
    if (part === null || typeof part !== "object") return part;
    if (!("output" in part) || !("toolCallId" in part) || part.state !== "output-available") return part;
    const shortened = truncateToolOutput(part.output, TOOL_OUTPUT_CHARS);
    if (!shortened.truncated) return part;
    compacted.push(typeof part.toolCallId === "string" ? part.toolCallId : safeString(part.toolCallId));
    return { ...part, output: shortened.output };
  });
  if (compacted.length === 0) return message;
  return withMarks({ ...message, parts }, "compactedToolOutputs", compacted);
}

/** The text of a text part longer than the storage threshold, else undefined. */
function longText(part: SessionMessagePart | undefined): string | undefined {
  if (part === null || typeof part !== "object" || part.type !== "text") return undefined;
  return typeof part.text === "string" && part.text.length > TEXT_PART_CHARS ? part.text : undefined;
}

/**
 * Replaces text parts over 1000 characters, oldest first, by a short marker until the message fits, and marks
 * their indexes. Sizes are tracked by difference so a message with many parts is not re-serialised per part.
 */
function compactTextParts(message: SessionMessage, size: number, maxBytes: number): SessionMessage {
  const parts: SessionMessagePart[] = [...message.parts];
  const indexes: number[] = [];
  let estimate = size;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    const text = longText(part);
    if (part === undefined || text === undefined) continue;
    const replacement = {
      ...part,
      text: `[Text truncated for storage (${text.length} chars). First ${TEXT_PREVIEW_CHARS} chars: ${sliceChars(text, TEXT_PREVIEW_CHARS)}...]`,
    };
    estimate += (jsonBytes(replacement) ?? 0) - (jsonBytes(part) ?? 0);
    parts[i] = replacement;
    indexes.push(i);
    if (estimate > maxBytes) continue;
    // The estimate leaves out the metadata marks; confirm with one exact measurement before stopping.
    const candidate = withMarks({ ...message, parts: [...parts] }, "compactedTextParts", indexes);
    const exact = jsonBytes(candidate) ?? 0;
    if (exact <= maxBytes) return candidate;
    estimate = exact;
  }
  if (indexes.length === 0) return message;
  return withMarks({ ...message, parts }, "compactedTextParts", indexes);
}

/**
 * A read-time utility (for building a model's context; stores never truncate): returns the message unchanged
 * when its JSON fits in `maxBytes` (UTF-8), else a copy shrunk to fit: assistant
 * tool outputs first (structure kept, `metadata.compactedToolOutputs`), then long text parts oldest first
 * (`metadata.compactedTextParts`); content these steps may not touch can leave it over the limit.
 */
export function enforceRowSizeLimit(
  message: SessionMessage,
  maxBytes: number = ROW_MAX_BYTES,
): SessionMessage {
  return limitRowSize(message, maxBytes).message;
}

/**
 * `enforceRowSizeLimit` that also returns the JSON it measured when the message is kept as it is, so the caller
 * can store it without serialising the message a second time.
 * @internal
 */
export function limitRowSize(
  message: SessionMessage,
  maxBytes: number = ROW_MAX_BYTES,
): { message: SessionMessage; json?: string } {
  if (typeof maxBytes !== "number" || Number.isNaN(maxBytes) || maxBytes < 0) {
    throw new RangeError(`maxBytes must be a number >= 0, got ${safeString(maxBytes)}`);
  }
  const json = jsonOf(message);
  // An unserialisable message cannot be stored at all; leave it for the store's own validation to reject.
  if (json === undefined) return { message };
  const size = utf8Length(json);
  if (size <= maxBytes || !Array.isArray(message.parts)) return { message, json };
  if (message.role !== "assistant") return { message: compactTextParts(message, size, maxBytes) };
  const compacted = compactToolOutputs(message);
  if (compacted === message) return { message: compactTextParts(message, size, maxBytes) };
  const compactedSize = jsonBytes(compacted) ?? 0;
  if (compactedSize <= maxBytes) return { message: compacted };
  return { message: compactTextParts(compacted, compactedSize, maxBytes) };
}
