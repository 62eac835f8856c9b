/**
 * Erasure through a manager: a session, or every session of an owner, with everything of theirs (see
 * SessionRegistry.erase), answered with a receipt. Each session is erased in its own transaction, so a crash
 * leaves every session either whole or gone, and running the erasure again completes it.
 */

import type { SessionMessage } from "../contract/message.js";
import type { SessionRegistry } from "../contract/registry.js";
import { SessionError } from "../errors.js";
import { assertNamedSessionId } from "../message/ids.js";
import {
  addCounts,
  type ErasureCondition,
  type ErasureCounts,
  type ErasureReceipt,
  emptyReceipt,
} from "../store/erasure.js";
import { assertOwner } from "../store/owner.js";
import { blockKeys, type ManagerState, retireSession } from "./state.js";

/** Sessions an owner's erasure reads per registry page (each page is erased before the next is read). */
const OWNER_PAGE = 100;

type Erasing = Required<Pick<SessionRegistry, "erase">>["erase"];

function eraser<M extends SessionMessage>(state: ManagerState<M>): Erasing {
  const registry = state.store.registry;
  if (typeof registry.erase !== "function") {
    throw new SessionError("UNSUPPORTED", `The ${state.store.backend} store's registry cannot erase`);
  }
  return registry.erase.bind(registry);
}

/**
 * Erases one session; null when nothing was stored under it or `condition` did not hold. A Session of it the
 * manager handed out is closed (`retireFirst`: before the erasure, so it cannot write the session back; else only
 * once it was erased, as a sweep does, which must not close a session it keeps).
 */
export async function eraseOne<M extends SessionMessage>(
  state: ManagerState<M>,
  sessionId: string,
  condition?: ErasureCondition,
): Promise<ErasureCounts | null> {
  const erase = eraser(state);
  const keys = blockKeys(state, sessionId);
  if (!condition) await retireSession(state, sessionId);
  const counts = await erase(sessionId, condition ? { blockKeys: keys, condition } : { blockKeys: keys });
  if (counts && condition) await retireSession(state, sessionId);
  return counts;
}

/** `manager.erase(id)`: `NOT_FOUND` when nothing is stored under the id. */
export async function eraseSessionOf<M extends SessionMessage>(
  state: ManagerState<M>,
  sessionId: string,
): Promise<ErasureReceipt> {
  assertNamedSessionId(sessionId);
  const counts = await eraseOne(state, sessionId);
  if (!counts) throw new SessionError("NOT_FOUND", `Session "${sessionId}" not found`);
  const receipt = emptyReceipt();
  receipt.sessionIds.push(sessionId);
  addCounts(receipt, counts);
  return receipt;
}

/** `manager.eraseOwner(owner)`: every session registered with the owner; `NOT_FOUND` when it has none. */
export async function eraseOwnerOf<M extends SessionMessage>(
  state: ManagerState<M>,
  given: string,
): Promise<ErasureReceipt> {
  const owner = assertOwner(given);
  eraser(state);
  const receipt = emptyReceipt();
  for (;;) {
    // Erased sessions leave the owner's range, so the first page is always the rest.
    const page = await state.store.registry.list({ owner, limit: OWNER_PAGE });
    if (page.length === 0) break;
    for (const info of page) {
      const counts = await eraseOne(state, info.id);
      if (!counts) continue; // erased meanwhile by another caller
      receipt.sessionIds.push(info.id);
      addCounts(receipt, counts);
    }
  }
  if (receipt.sessionIds.length === 0) {
    throw new SessionError("NOT_FOUND", `Owner "${owner}" has no sessions`);
  }
  return receipt;
}
