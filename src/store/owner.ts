/**
 * The owner of a session: whose it is (a user, a tenant), set when the session is registered and never changed.
 * One rule for every backend and surface (the registry, the manager's owner view, search, the agent runtime,
 * imports, the CLI), so an owner id one backend would store differently is refused everywhere alike.
 */
import { SessionError } from "../errors.js";
import { describe } from "../message/describe.js";
import { fitsBytes, isWellFormed } from "../message/ids.js";

/** The longest owner id in UTF-8 bytes: an owner is an app's user or tenant id, not free text. */
export const MAX_OWNER_BYTES = 256;

// C0 and C1 controls and DEL (U+0000 included): an owner id is shown in lists, logs and the viewer, where a
// newline or an escape sequence would forge what an operator reads.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** True when `value` can be an owner id: a non-empty, well-formed string of at most 256 UTF-8 bytes, no controls. */
export function isOwnerId(value: unknown): value is string {
  return (
    typeof value === "string" &&
    value.length > 0 &&
    !CONTROL.test(value) &&
    isWellFormed(value) &&
    fitsBytes(value, MAX_OWNER_BYTES)
  );
}

/**
 * Throws `INVALID_ARGUMENT` naming `field` (its issue at `owner`, the option or argument every caller names so)
 * unless `value` is an owner id ({@link isOwnerId}); returns it.
 */
export function assertOwner(value: unknown, field = "owner"): string {
  if (isOwnerId(value)) return value;
  throw new SessionError(
    "INVALID_ARGUMENT",
    `${field} must be a non-empty, well-formed string of at most ${MAX_OWNER_BYTES} bytes in UTF-8 without control characters, got ${describe(value)}`,
    { issues: [{ path: "owner", rule: "format" }] },
  );
}

/** An optional owner: undefined or null for none, else {@link assertOwner}. */
export function optionalOwner(value: unknown, field = "owner"): string | undefined {
  return value === undefined || value === null ? undefined : assertOwner(value, field);
}

/** {@link assertOwner} as an assertion (a schema's hand-written rule). */
export function assertOwnerId(value: unknown): asserts value is string {
  assertOwner(value);
}

/** Throws `INVALID_ARGUMENT` unless `value` is undefined, null or an owner id (a schema's hand-written rule). */
export function assertOptionalOwner(value: unknown): asserts value is string | null | undefined {
  optionalOwner(value);
}

/** Whether a registry row is `owner`'s: a session without an owner belongs to no owner's view. */
export function ownedBy(info: { owner?: string | undefined } | null, owner: string): boolean {
  return info !== null && info.owner === owner;
}
