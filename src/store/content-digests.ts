/**
 * The keyed digests of the owner of one session (docs/PRIVACY.md, "Ids derived from content"): what a door derives
 * an id from a user's words with, so that id confirms no guess of them. The session's registered owner's
 * `ownerDigests` (its current key's first, then each previous key's during a rotation); none for an owner in clear,
 * a session registered without an owner or not at all, or a store without the capability (those keep plain digests).
 */
import { hasSessionRegistry, type OwnerDigest } from "../contract/registry.js";
import type { SessionStore } from "../contract/store.js";

/** The keyed digests of `sessionId`'s owner on `store` (`DECRYPT_FAILED` where the store's keys refuse the owner). */
export async function sessionDigestsOf(store: SessionStore, sessionId: string): Promise<OwnerDigest[]> {
  if (!hasSessionRegistry(store) || store.registry.ownerDigests === undefined || sessionId === "") return [];
  const owner = (await store.registry.get(sessionId))?.owner;
  return owner === undefined ? [] : store.registry.ownerDigests(owner);
}
