import { SessionError } from "./errors.js";
import { findLossyValue, type LossyValue, lossyAdvice } from "./lossy-json.js";
import type { SessionMessage, StoredCompaction } from "./types.js";

/** Ids with this prefix name synthetic compaction overlays and are never stored as messages. */
export const COMPACTION_PREFIX = "compaction_";

// A UTF-16 surrogate without its other half: not a character, so UTF-8 cannot encode it (Postgres stores U+FFFD).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when `text` is well-formed Unicode (no lone surrogate), i.e. it survives UTF-8 unchanged. */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/**
 * True when `text` can be an id on every backend: no U+0000 (Postgres refuses it, node:sqlite cuts at it) and no
 * lone surrogate (Postgres would store U+FFFD, so `a\uD800` and `a\uDC00` would name the same row).
 */
export function isStorableId(text: string): boolean {
  return !text.includes("\0") && isWellFormed(text);
}

/**
 * The longest id, label or entry key, in UTF-8 bytes. Postgres indexes every name, and an index row holds at most
 * ~2.7 KB, so a longer name would be a raw error there; the limit holds on every backend so all answer alike.
 */
export const MAX_NAME_BYTES = 1024;

/** True when `text` (well-formed) takes at most `maxBytes` bytes in UTF-8. */
export function fitsBytes(text: string, maxBytes: number): boolean {
  // A UTF-16 code unit takes at most 3 bytes, so a short name needs no count.
  if (text.length * 3 <= maxBytes) return true;
  let bytes = 0;
  for (let i = 0; i < text.length && bytes <= maxBytes; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff) {
      bytes += 4; // a surrogate pair: one 4-byte character
      i++;
    } else bytes += 3;
  }
  return bytes <= maxBytes;
}

/**
 * False for a value no stored row can be named by (not a string, or refused by {@link isStorableId}): reads answer
 * it with empty/null on every backend instead of asking the database, which would fail (U+0000 on Postgres) or
 * match a different id (a lone surrogate becomes U+FFFD on the way to UTF-8).
 */
export function canBeStored(value: unknown): value is string {
  return isNameWithin(value, MAX_NAME_BYTES);
}

/** {@link canBeStored} for names of another length limit (a block key's). */
export function isNameWithin(value: unknown, maxBytes: number): value is string {
  return typeof value === "string" && isStorableId(value) && fitsBytes(value, maxBytes);
}

/** True for the synthetic message that stands in for a compacted range. */
export function isCompactionMessage(message: { id: string }): boolean {
  return typeof message.id === "string" && message.id.startsWith(COMPACTION_PREFIX);
}

// An ISO-8601 date-time as toISOString writes it (extended years included), seconds and offset optional.
const ISO_DATE_TIME =
  /^(?:\d{4}|[+-]\d{6})-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** True for a `createdAt` that stores and reads back as the same instant: a valid Date or an ISO-8601 string. */
export function isValidCreatedAt(value: unknown): value is Date | string {
  if (value instanceof Date) return !Number.isNaN(value.getTime());
  return typeof value === "string" && ISO_DATE_TIME.test(value) && !Number.isNaN(new Date(value).getTime());
}

/** Throws `INVALID_MESSAGE` / `RESERVED_ID` unless `message` can be stored (updates and imports). */
export function assertValidMessage(message: unknown): asserts message is SessionMessage {
  assertMessageShape(message);
  if (message.id.startsWith(COMPACTION_PREFIX)) {
    throw new SessionError(
      "RESERVED_ID",
      `Message id "${message.id}" is reserved: ids starting with "${COMPACTION_PREFIX}" name compaction overlays`,
    );
  }
}

/**
 * Throws `INVALID_MESSAGE` unless `message` is a well-formed message. Appends and upserts check only this: an
 * overlay id (`compaction_…`) there is an echo of a read, which they ignore (see {@link isEchoedOverlay}).
 */
export function assertMessageShape(message: unknown): asserts message is SessionMessage {
  if (message === null || typeof message !== "object" || Array.isArray(message)) {
    throw new SessionError("INVALID_MESSAGE", `A message must be an object, got ${describe(message)}`);
  }
  assertOwnFields(message);
  const { id, role, parts } = message as Record<string, unknown>;
  if (typeof id !== "string" || id.length === 0) {
    // The AI SDK's onFinish hands over a responseMessage with id "" unless the response was given an id generator.
    const hint =
      id === ""
        ? " (an AI SDK responseMessage has an id only when toUIMessageStreamResponse gets generateMessageId; " +
          "persistChatTurn's turn.streamOptions sets it)"
        : "";
    throw new SessionError(
      "INVALID_MESSAGE",
      `A message needs a non-empty string id, got ${describe(id)}${hint}`,
    );
  }
  if (typeof role !== "string" || role.length === 0) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Message "${id}" needs a non-empty string role, got ${describe(role)}`,
    );
  }
  if (!Array.isArray(parts)) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Message "${id}" needs an array of parts, got ${describe(parts)}`,
    );
  }
  // An id or role that could not round-trip on every backend is refused everywhere (see isStorableId).
  if (!isStorableId(id) || !isStorableId(role)) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Message id and role must be well-formed Unicode without U+0000 (message ${describe(id)})`,
    );
  }
  if (!fitsBytes(id, MAX_NAME_BYTES)) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `A message id must be at most ${MAX_NAME_BYTES} bytes in UTF-8, got ${describe(id)} (${id.length} characters)`,
    );
  }
  // JSON.stringify would store whatever toJSON returns (`toJSON: () => 1` stores "1", a row no read can parse):
  // a message is serialised as the object it is, so a toJSON on it is refused rather than obeyed.
  if (typeof (message as { toJSON?: unknown }).toJSON === "function") {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Message "${id}" must not define toJSON: it is stored as it is`,
    );
  }
  const { createdAt } = message as { createdAt?: unknown };
  if (createdAt !== undefined && !isValidCreatedAt(createdAt)) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Message "${id}" needs createdAt as a valid Date or an ISO-8601 date-time string, got ${describe(createdAt)}`,
    );
  }
}

// The fields every read needs. JSON.stringify (how a message is stored) writes own enumerable properties only.
const REQUIRED_FIELDS = ["id", "role", "parts"] as const;

/**
 * Throws `INVALID_MESSAGE` when a required field is present but inherited or non-enumerable: it would pass the
 * checks, yet the stored JSON would lack it (`Object.create({ id, role, parts })` was stored as "{}").
 */
function assertOwnFields(message: object): void {
  for (const field of REQUIRED_FIELDS) {
    if (field in message && !Object.prototype.propertyIsEnumerable.call(message, field)) {
      throw new SessionError(
        "INVALID_MESSAGE",
        `A message's "${field}" must be its own enumerable property (inherited or hidden fields are not stored)`,
      );
    }
  }
}

/**
 * True for an overlay message a client echoed back (chat clients post their whole transcript, overlay included):
 * appends and upserts store nothing for it and raise no error.
 */
export function isEchoedOverlay(message: SessionMessage): boolean {
  return message.id.startsWith(COMPACTION_PREFIX);
}

/** Throws `INVALID_ARGUMENT` unless `value` is a non-empty, well-formed string without U+0000. */
export function assertId(value: unknown, what: string, maxBytes = MAX_NAME_BYTES): asserts value is string {
  if (typeof value !== "string" || value.length === 0 || !isStorableId(value)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${what} must be a non-empty, well-formed Unicode string without U+0000, got ${describe(value)}`,
    );
  }
  assertFits(value, what, maxBytes);
}

/** Throws `INVALID_ARGUMENT` when `value` takes more than `maxBytes` bytes in UTF-8 (see {@link MAX_NAME_BYTES}). */
function assertFits(value: string, what: string, maxBytes: number): void {
  if (!fitsBytes(value, maxBytes)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${what} must be at most ${maxBytes} bytes in UTF-8, got ${describe(value)} (${value.length} characters)`,
    );
  }
}

/**
 * Throws `INVALID_ARGUMENT` unless `value` can name a session: the one session-id rule of every store, `Session`,
 * `SessionManager` and the agent runtime (well-formed, no U+0000; see {@link isStorableId}). `""` is the default
 * session of a `Session` or provider; {@link assertNamedSessionId} refuses it.
 */
export function assertSessionId(value: unknown): asserts value is string {
  if (typeof value !== "string" || !isStorableId(value)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `A session id must be a well-formed Unicode string without U+0000, got ${describe(value)}`,
    );
  }
  assertFits(value, "A session id", MAX_NAME_BYTES);
}

/**
 * Throws `INVALID_ARGUMENT` unless `value` can name a session of its own: {@link assertSessionId}'s rule, minus
 * `""`, which is the unnamed default session and so cannot be a registry row or an agent session.
 */
export function assertNamedSessionId(value: unknown): asserts value is string {
  assertSessionId(value);
  if (value.length === 0) {
    throw new SessionError("INVALID_ARGUMENT", 'A session id must not be empty ("" is the default session)');
  }
}

/** Throws `INVALID_ARGUMENT` unless `parentId` is undefined, null or a non-empty string. */
export function assertParentId(parentId: unknown): asserts parentId is string | null | undefined {
  if (parentId === undefined || parentId === null) return;
  assertId(parentId, "parentId");
}

/**
 * Serialises a message for storage; throws `INVALID_MESSAGE` when it is not JSON-serialisable or holds a value JSON
 * stores without its data (a Map, a Set, an ArrayBuffer or typed array: see lossy-json.ts).
 */
export function serializeMessage(message: SessionMessage): string {
  let json: string;
  let lossy: LossyValue | null;
  try {
    json = JSON.stringify(message);
    lossy = findLossyValue(message, json);
  } catch (cause) {
    throw new SessionError("INVALID_MESSAGE", `Message "${message.id}" cannot be serialised to JSON`, {
      cause,
    });
  }
  // Stored, a Map or an ArrayBuffer would read back as {}: refused, never silently changed.
  if (lossy) throw new SessionError("INVALID_MESSAGE", `Message "${message.id}" holds ${lossyAdvice(lossy)}`);
  return json;
}

/** Parses a stored row back into a message (`createdAt` revived as a Date); null when the row is corrupt. */
export function parseMessage(json: string): SessionMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  return hasMessageFields(value) ? reviveMessage(value) : null;
}

/** True when parsed JSON has what every read needs (a string id and role, an array of parts): a readable row. */
export function hasMessageFields(value: unknown): value is SessionMessage {
  if (value === null || typeof value !== "object") return false;
  const { id, role, parts } = value as Record<string, unknown>;
  return typeof id === "string" && typeof role === "string" && Array.isArray(parts);
}

/** Revives a parsed message's `createdAt` as a Date, as every read returns it. @internal */
export function reviveMessage(message: SessionMessage): SessionMessage {
  // Only an ISO-8601 date-time is revived: `new Date("1")` would turn any digits into a date (2001).
  if (typeof message.createdAt === "string" && ISO_DATE_TIME.test(message.createdAt)) {
    const date = new Date(message.createdAt);
    if (!Number.isNaN(date.getTime())) message.createdAt = date;
  }
  return message;
}

/**
 * The searchable text of a stored message's JSON ("" when it is not a message): a search hit needs no more, so
 * the message is not revived (its `createdAt` stays a string: a Date per hit was ~a sixth of reading 20 hits).
 */
export function storedMessageText(json: string): string {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return "";
  }
  const parts = (value as { parts?: unknown } | null)?.parts;
  return Array.isArray(parts) ? messageText(value as SessionMessage) : "";
}

/** The searchable text of a message: its `text` parts joined by newlines. */
export function messageText(message: SessionMessage): string {
  const texts: string[] = [];
  for (const part of message.parts) {
    if (part && part.type === "text" && typeof part.text === "string" && part.text.length > 0) {
      texts.push(part.text);
    }
  }
  return texts.join("\n");
}

/** UTF-8 byte length of a string without allocating a buffer. */
export { utf8Length } from "./runtime/bytes.js";

/** The synthetic assistant message that replaces a compacted range on read. */
export function overlayMessage(compaction: StoredCompaction): SessionMessage {
  return {
    id: `${COMPACTION_PREFIX}${compaction.id}`,
    role: "assistant",
    parts: [{ type: "text", text: compaction.summary }],
    createdAt: new Date(compaction.createdAt),
  };
}

/**
 * A short description of any value for error messages. Total: it never throws, whatever the value (null-prototype
 * objects, throwing `toString`, symbols, BigInts), so a bad argument is reported instead of crashing the report.
 */
export function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return value.length > 40 ? `"${value.slice(0, 40)}…"` : `"${value}"`;
  if (typeof value === "object") return "an object";
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol") return "a symbol";
  // number, bigint, boolean: String() of a primitive cannot throw.
  return `${typeof value} ${String(value)}`;
}
