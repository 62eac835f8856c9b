// Id rules: which strings can name a stored row (session, message, parent, label, key) on every backend, and the
// asserts that refuse the rest. Hand-written, not schemas: they run on every append and read, where the benchmark
// counts each allocation (docs/HARDENING.md, "What stays hand-written").
import { SessionError } from "../errors.js";
import { describe } from "./describe.js";

// A UTF-16 surrogate without its other half: not a character, so UTF-8 cannot encode it (Postgres stores U+FFFD).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * C0 and C1 control characters and DEL (U+0000 included), refused in names a person reads (owner ids, memory
 * paths): a newline or an escape sequence there would forge what a listing, a log or the viewer shows.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds.
export const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** True when `text` is well-formed Unicode (no lone surrogate), i.e. it survives UTF-8 unchanged. */
export function isWellFormed(text: string): boolean {
  // The native check where the runtime has one: no regex scan of a long text.
  const native = (text as { isWellFormed?: () => boolean }).isWellFormed;
  return native ? native.call(text) : !LONE_SURROGATE.test(text);
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

/**
 * Throws `INVALID_ARGUMENT` unless `value` is a non-empty, well-formed string without U+0000; `what` names it in the
 * message, `path` in the error's issues (the argument as the caller wrote it, e.g. `messageIds.2`).
 */
export function assertId(
  value: unknown,
  what: string,
  path: string,
  maxBytes = MAX_NAME_BYTES,
): asserts value is string {
  if (typeof value !== "string" || value.length === 0 || !isStorableId(value)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${what} must be a non-empty, well-formed Unicode string without U+0000, got ${describe(value)}`,
      {
        issues: [
          { path, rule: value === undefined ? "required" : typeof value === "string" ? "format" : "type" },
        ],
      },
    );
  }
  assertFits(value, what, path, maxBytes);
}

/** Throws `INVALID_ARGUMENT` when `value` takes more than `maxBytes` bytes in UTF-8 (see {@link MAX_NAME_BYTES}). */
function assertFits(value: string, what: string, path: string, maxBytes: number): void {
  if (!fitsBytes(value, maxBytes)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${what} must be at most ${maxBytes} bytes in UTF-8, got ${describe(value)} (${value.length} characters)`,
      { issues: [{ path, rule: "too_long" }] },
    );
  }
}

/**
 * Throws `INVALID_ARGUMENT` unless `value` can name a session: the one session-id rule of every store, `Session`,
 * `SessionManager` and the agent runtime (well-formed, no U+0000; see {@link isStorableId}). `""` is the default
 * session of a `Session` or provider; {@link assertNamedSessionId} refuses it.
 */
export function assertSessionId(value: unknown, path = "sessionId"): asserts value is string {
  if (typeof value !== "string" || !isStorableId(value)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `A session id must be a well-formed Unicode string without U+0000, got ${describe(value)}`,
      { issues: [{ path, rule: typeof value === "string" ? "format" : "type" }] },
    );
  }
  assertFits(value, "A session id", path, MAX_NAME_BYTES);
}

/**
 * Throws `INVALID_ARGUMENT` unless `value` can name a session of its own: {@link assertSessionId}'s rule, minus
 * `""`, which is the unnamed default session and so cannot be a registry row or an agent session.
 */
export function assertNamedSessionId(value: unknown, path = "sessionId"): asserts value is string {
  assertSessionId(value, path);
  if (value.length === 0) {
    throw new SessionError("INVALID_ARGUMENT", 'A session id must not be empty ("" is the default session)', {
      issues: [{ path, rule: "required" }],
    });
  }
}

/** Throws `INVALID_ARGUMENT` unless `parentId` is undefined, null or a non-empty string. */
export function assertParentId(parentId: unknown): asserts parentId is string | null | undefined {
  if (parentId === undefined || parentId === null) return;
  assertId(parentId, "parentId", "parentId");
}
