/**
 * The owner of a session: whose it is (a user, a tenant), set when the session is registered and never changed.
 * One rule for every backend and surface (the registry, the manager's owner view, search, the agent runtime,
 * imports, the CLI), so an owner id one backend would store differently is refused everywhere alike.
 */
import { z } from "zod";
import { fitsBytes, isWellFormed } from "../message/ids.js";
import { parseInput } from "../schema/parse.js";
import { rule } from "../schema/to-session-error.js";

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
 * An owner id ({@link isOwnerId}) as a schema: refused with `INVALID_ARGUMENT` (rule `format`), the message naming
 * `field`, the option or argument the caller took it as.
 */
export const ownerId = (field = "owner") =>
  z.custom<string>(
    isOwnerId,
    rule(
      `${field} must be a non-empty, well-formed string of at most ${MAX_OWNER_BYTES} bytes in UTF-8 without control characters`,
      "format",
    ),
  );

// One schema per field name: the few fixed names callers word their messages with.
const ownerRules = new Map<string, z.ZodType<string>>();

/** Parses an owner id ({@link ownerId}, its issue at `owner`, the name every caller gives it); returns it. */
export function parseOwner(value: unknown, field = "owner"): string {
  // An agent step's append path parses its owner on every write: a valid owner (the rule itself) skips the parse.
  if (isOwnerId(value)) return value;
  const schema = ownerRules.get(field) ?? ownerId(field);
  ownerRules.set(field, schema);
  return parseInput(schema, value, { path: "owner" });
}

/** An optional owner: undefined or null for none, else {@link parseOwner}. */
export function optionalOwner(value: unknown, field = "owner"): string | undefined {
  return value === undefined || value === null ? undefined : parseOwner(value, field);
}

/** Whether a registry row is `owner`'s: a session without an owner belongs to no owner's view. */
export function ownedBy(info: { owner?: string | undefined } | null, owner: string): boolean {
  return info !== null && info.owner === owner;
}
