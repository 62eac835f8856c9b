import { SessionError } from "../errors.js";
import { describe } from "../message/describe.js";
import { assertId, canBeStored, isNameWithin, MAX_NAME_BYTES } from "../message/ids.js";

/**
 * The one rule every store applies to the names of context rows (block keys, entry labels and keys) and registry
 * ids: a write refuses a name no backend could store exactly (`INVALID_ARGUMENT`), and a read by such a name finds
 * nothing without asking the database, so every backend answers alike. Hand-written, not schemas: an agent step
 * writes its block on the append path (store/step.ts); a schema calls them through `checkedBy`.
 */

/**
 * The longest block key, in UTF-8 bytes: an auto-wired key is `<label>_<sessionId>`, two names and a "_", so any
 * label and session id within {@link MAX_NAME_BYTES} make a key that fits (and Postgres can still index it).
 */
export const MAX_BLOCK_KEY_BYTES = 2 * MAX_NAME_BYTES + 1;

/**
 * Throws `INVALID_ARGUMENT` unless `value` can name a stored row (non-empty, well-formed, no U+0000, short enough);
 * `path` names the argument in the error's issues.
 */
export function assertStoredKey(value: unknown, what: string, path = "key"): asserts value is string {
  assertId(value, what, path);
}

/** {@link assertStoredKey} for a context-block key, which may be as long as {@link MAX_BLOCK_KEY_BYTES}. */
export function assertBlockKey(value: unknown, path = "key"): asserts value is string {
  assertId(value, "A block key", path, MAX_BLOCK_KEY_BYTES);
}

/** True when a block row could have the key `value`; reads answer empty for anything else. */
export function isBlockKey(value: unknown): value is string {
  return isNameWithin(value, MAX_BLOCK_KEY_BYTES) && value.length > 0;
}

/**
 * Throws `INVALID_ARGUMENT` unless `value` is a string (the content of a block or entry); `path` names the
 * argument in the error's issues when it is not the content itself.
 */
export function assertContent(value: unknown, path?: string): asserts value is string {
  if (typeof value !== "string") {
    const what = path === undefined ? "Content" : `"${path}"`;
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${what} must be a string, got ${describe(value)}`,
      path === undefined ? undefined : { issues: [{ path, rule: "type" }] },
    );
  }
}

/** True when a row could be named `value`; reads answer empty for anything else. */
export function isLookupKey(value: unknown): value is string {
  return canBeStored(value) && value.length > 0;
}

/** The block keys of `keys` a row could have: a delete of a name that cannot exist deletes nothing. */
export function lookupKeys(keys: unknown): string[] {
  if (!Array.isArray(keys))
    throw new SessionError("INVALID_ARGUMENT", "deleteBlocks expects an array of keys", {
      issues: [{ path: "keys", rule: "type" }],
    });
  return keys.filter(isBlockKey);
}
