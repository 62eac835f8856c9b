/**
 * Session names at rest (docs/PRIVACY.md, "Session names"): the registry's `name` of a session whose owner has a key
 * is stored sealed (the row codec's "name" kind, bound to the session id), a name in clear with a leading `~`
 * doubled. Both SQL registries write a name through {@link storedSessionName} and read rows through
 * {@link openedName} (store/registry-base.ts storedName/openNames). A name names its session, not an append: it is
 * sealed on register and rename only.
 */
import type { SessionInfo } from "../contract/registry.js";
import { SessionError } from "../errors.js";
import type { ContentKeys } from "./crypto/content-keys.js";
import { decode, encode, hasNamedKey, isSealedValue } from "./crypto/row-codec.js";
import { type OwnerWrite, ownerGuard, ownerWrite, UNGUARDED } from "./crypto/write-guard.js";
import { ownerHash } from "./owner.js";
import type { StoredName } from "./registry-base.js";

/**
 * The name column's value of session `sessionId` registered with `owner` (undefined: the one it is registered with,
 * looked up): sealed under the owner's key, or in clear. `DECRYPT_FAILED` as a write of the owner's content is
 * refused (content-keys.ts keyFor): an owner with a recorded key the store lacks.
 */
export function storedSessionName(
  keys: ContentKeys | undefined,
  sessionId: string,
  owner: string | null | undefined,
  name: string,
): StoredName {
  const write = nameWrite(keys, sessionId, owner);
  return { value: encode("name", write.key, { sessionId }, name), guard: write.guard };
}

// The key a name of the session is sealed under and its guard: its owner's (`owner` undefined: the session's).
function nameWrite(
  keys: ContentKeys | undefined,
  sessionId: string,
  owner: string | null | undefined,
): OwnerWrite {
  const where = `the name of session "${sessionId}"`;
  if (!keys || owner === null) return UNGUARDED;
  if (owner !== undefined) return ownerWrite(keys, owner, where);
  const key = keys.keyFor(sessionId, true, where);
  const found = keys.ownerOf(sessionId);
  return found === null ? UNGUARDED : { key, guard: ownerGuard(ownerHash(found), key) };
}

/**
 * The row with its name opened: a sealed name this store has not the key for (no keyring, none for the owner, or
 * another key than the one that sealed it) reads as "" with `nameSealed` (a listing of many owners' sessions is not
 * refused for one of them); one that does not open with the key it names (changed, or moved from another session)
 * is `DECRYPT_FAILED`.
 */
export function openedName(keys: ContentKeys | undefined, row: SessionInfo): SessionInfo {
  const binding = { sessionId: row.id };
  if (!isSealedValue("name", row.name)) {
    const name = decode("name", undefined, null, binding, row.name);
    return name === row.name ? row : { ...row, name };
  }
  const owner = row.owner ?? null;
  if (!hasNamedKey(keys, owner, row.name)) return { ...row, name: "", nameSealed: true };
  return { ...row, name: decode("name", keys, owner, binding, row.name) };
}

/**
 * The name column's value of an imported registry row (a transfer, an adoption): sealed as a register's is. A row
 * read where its name could not be opened (`nameSealed`) is refused (`DECRYPT_FAILED`) rather than stored nameless.
 */
export function importedName(keys: ContentKeys | undefined, info: SessionInfo): string {
  if (info.nameSealed) {
    throw new SessionError(
      "DECRYPT_FAILED",
      `The name of session "${info.id}" was read by a store without its owner's key: open the source with its keyring`,
    );
  }
  return storedSessionName(keys, info.id, info.owner ?? null, info.name).value;
}
