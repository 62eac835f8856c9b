/**
 * The rule every write of a sealed kind keeps (docs/PRIVACY.md, "Refusals"): its key is looked up as an
 * {@link OwnerWrite}, the key with what the look-up found recorded for the owner, and the write's statement requires
 * that to be still so — the owner's key check still the one it sealed under, or, written in clear, still none. A
 * store without the owner's key that looked up "no key" and writes a moment later, after another process recorded
 * the owner's first key, is refused by its own statement instead of landing in clear; the write then looks the key
 * up again (`DECRYPT_FAILED` without it, sealed with it). Each engine states the condition once (SQLite in
 * sql/engines/sqlite/owner-guard.ts, Postgres in sql/engines/postgres/owner-guard.ts guardSql), so a write taking its key here carries it.
 */
import { SessionError } from "../../errors.js";
import { ownerHash } from "../owner.js";
import type { ContentKeys } from "./content-keys.js";
import { checkOf } from "./owner-keys.js";

/**
 * What a write's key look-up found for its owner: the owner's hash (null: the write has no owner, nothing to guard)
 * and the key check recorded for it then (null: none, the write is in clear).
 */
export interface OwnerGuard {
  ownerHash: string | null;
  check: string | null;
}

/** A write's key (null: in clear) and the {@link OwnerGuard} its statement carries. */
export interface OwnerWrite {
  key: Uint8Array | null;
  guard: OwnerGuard;
}

/** The guard of a write of the owner whose hash is `ownerHash` (null: none) under `key` (null: in clear). */
export function ownerGuard(ownerHash: string | null, key: Uint8Array | null): OwnerGuard {
  // A write's key is the owner's recorded one when the look-up answers it (ContentKeys.checkedKey recorded it).
  return { ownerHash, check: ownerHash === null || key === null ? null : checkOf(key) };
}

/**
 * The key a write of `owner`'s content seals with (ContentKeys.ownerKey: `DECRYPT_FAILED`, naming `where`, for an
 * owner with a recorded key the store lacks) and its guard; no owner (or no keys): in clear, unguarded.
 */
export function ownerWrite(keys: ContentKeys | undefined, owner: string | null, where: string): OwnerWrite {
  if (!keys || owner === null) return UNGUARDED;
  const key = keys.ownerKey(owner, true, where);
  return { key, guard: ownerGuard(ownerHash(owner), key) };
}

/** An {@link OwnerWrite} in clear that guards nothing: a store that seals nothing for the write. */
export const UNGUARDED: OwnerWrite = { key: null, guard: { ownerHash: null, check: null } };

/** The parameters of an engine's condition of an {@link OwnerGuard} (SQLite's sql/engines/sqlite/owner-guard.ts). */
export const ownerGuardParams = (guard: OwnerGuard): (string | null)[] => [guard.ownerHash, guard.check];

/**
 * A write its guard refused: the owner's key changed since its look-up (another process recorded a first key,
 * rotated, or erased). Thrown from inside the write's transaction so that it rolls back; the caller looks the key
 * up again and writes anew ({@link retryGuarded}), never answered to a caller of the store.
 */
export class GuardRefused extends Error {
  constructor(readonly what: string) {
    super(`The owner's key changed while ${what} was written`);
  }
}

// A write refused by its guard more often than this means the owner's key keeps changing under it.
const MAX_TRIES = 3;

/**
 * Runs `write` (its key looked up `fresh` after a refusal) until its guard lets it through: a write refused
 * ({@link GuardRefused}) runs again with its key looked up anew, which refuses it `DECRYPT_FAILED` where the store
 * lacks a key the owner has now; `CONFLICT` past a few tries.
 */
export async function retryGuarded<T>(write: (fresh: boolean) => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await write(tries > 1);
    } catch (error) {
      if (!(error instanceof GuardRefused)) throw error;
      if (tries >= MAX_TRIES) {
        throw new SessionError(
          "CONFLICT",
          `The key of an owner kept changing while ${error.what} was written`,
        );
      }
    }
  }
}
