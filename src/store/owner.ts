/**
 * The owner of a session: whose it is (a user, a tenant), set when the session is registered and never changed.
 * One rule for every backend and surface (the registry, the manager's owner view, search, the agent runtime,
 * imports, the CLI), so an owner id one backend would store differently is refused everywhere alike.
 */
import { z } from "zod";
import { CONTROL, fitsBytes, isWellFormed } from "../message/ids.js";
import { sha256Hex, utf8Encode } from "../runtime/bytes.js";
import { parseInput } from "../schema/parse.js";
import { rule } from "../schema/to-session-error.js";

/** The longest owner id in UTF-8 bytes: an owner is an app's user or tenant id, not free text. */
export const MAX_OWNER_BYTES = 256;

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

/** Length of {@link ownerHash} in characters. */
export const OWNER_HASH_CHARS = 32;

/**
 * What stands for an owner where its id is not written: the name its key check is recorded under, and its token
 * inside a search index (written beside the session's own token into every indexed message of an owned session, so
 * an owner's search is that token ANDed with the match inside the index). The first 128 bits of SHA-256 over its
 * UTF-8 bytes, in lower-case hex (letters and digits only, so every tokenizer keeps it whole). Postgres computes the
 * same in SQL (`encode(sha256(convert_to(owner, 'UTF8')), 'hex')`, first 32 characters) where a statement reads the
 * owner. Owners never change (set when a session is registered), so the token of a row never goes stale.
 */
export function ownerHash(owner: string): string {
  // runtime/bytes: node:crypto where there is one, a portable SHA-256 in workerd (no Node.js built-ins there).
  return sha256Hex(utf8Encode(owner)).slice(0, OWNER_HASH_CHARS);
}
