/**
 * Removal through a manager: a delete, a pin against retention, a retention sweep, and erasure of a session or of
 * every session of an owner, with everything of theirs (see
 * SessionRegistry.erase), answered with a receipt. Each session is erased in its own transaction, so a crash
 * leaves every session either whole or gone, and running the erasure again completes it.
 */

import { memoryDirectoryKey } from "../context/block-keys.js";
import { hasContextStorage, hasRecords } from "../contract/context.js";
import { hasGraphItems } from "../contract/graph-items.js";
import type { SessionMessage } from "../contract/message.js";
import type { SessionInfo, SessionRegistry } from "../contract/registry.js";
import { SessionError } from "../errors.js";
import { assertId, assertNamedSessionId } from "../message/ids.js";
import {
  addCounts,
  type ErasureCondition,
  type ErasureCounts,
  type ErasureReceipt,
  emptyReceipt,
} from "../store/erasure.js";
import { parseOwner } from "../store/owner.js";
import { type RetentionPolicy, type SweepOptions, type SweepReport, sweep } from "../store/retention.js";
import { blockKeys, found, type ManagerState, retireSession } from "./state.js";

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

/**
 * `manager.eraseOwner(owner)`: every session registered with the owner, and the blocks and entries recorded as the
 * owner's (its memory-tool directory among them); `NOT_FOUND` when it has neither.
 */
export async function eraseOwnerOf<M extends SessionMessage>(
  state: ManagerState<M>,
  given: string,
): Promise<ErasureReceipt> {
  const owner = parseOwner(given);
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
  const own = await eraseOwnerBlocks(state, owner);
  receipt.blocks += own.blocks;
  receipt.entries += own.entries;
  // The owner's LangGraph store items (sql/graph-store/), before its key is destroyed below.
  // Counted only when there were some, so a receipt without items keeps its shape.
  const items = hasGraphItems(state.store) ? await state.store.graphItems.eraseOwner(owner) : 0;
  if (items > 0) receipt.items = items;
  // Crypto-shredding, after the rows are gone: with the key, no copy of the store (a backup taken before) can be
  // read for this owner again. Also when no session was left, so an erasure that stopped after its last session
  // destroys the key when run again.
  await state.store.registry.forgetKey?.(owner);
  if (receipt.sessionIds.length === 0 && own.blocks + own.entries + (receipt.items ?? 0) === 0) {
    throw new SessionError("NOT_FOUND", `Owner "${owner}" has no sessions`);
  }
  return receipt;
}

/**
 * Removes what the owner keeps outside its sessions: every block and entry recorded as the owner's (its memory-tool
 * directory, an app's owner-level blocks written with `{ owner }`), and its memory-tool directory's key however it
 * was written (the key is the library's own, `_memories_owner_<owner>`: it names no one else). How many blocks and
 * entries were stored.
 */
async function eraseOwnerBlocks<M extends SessionMessage>(
  state: ManagerState<M>,
  owner: string,
): Promise<{ blocks: number; entries: number }> {
  if (!hasContextStorage(state.store)) return { blocks: 0, entries: 0 };
  const blocks = state.store.blocks;
  const counts = hasRecords(blocks) ? await blocks.deleteRecorded({ owner }) : { blocks: 0, entries: 0 };
  const key = memoryDirectoryKey("owner", owner);
  if ((await blocks.getBlock(key)) !== null) {
    await blocks.deleteBlocks([key]);
    counts.blocks++;
  }
  return counts;
}

/** `manager.delete(id)`: the session's rows and registry row; true when it was registered. */
export async function deleteSessionOf<M extends SessionMessage>(
  state: ManagerState<M>,
  sessionId: string,
): Promise<boolean> {
  assertId(sessionId, "A session id", "sessionId");
  // The keys come from the cached Session's blocks, so before it is retired (closed, its writes turned off).
  const keys = blockKeys(state, sessionId);
  await retireSession(state, sessionId);
  return state.store.registry.delete(sessionId, { blockKeys: keys });
}

/** `manager.pin(id, pinned)`: `NOT_FOUND` for an unknown id, `UNSUPPORTED` for a registry that cannot pin. */
export async function pinSessionOf<M extends SessionMessage>(
  state: ManagerState<M>,
  sessionId: string,
  pinned: boolean,
): Promise<SessionInfo> {
  assertId(sessionId, "A session id", "sessionId");
  const registry = state.store.registry;
  if (typeof registry.pin !== "function") {
    throw new SessionError("UNSUPPORTED", `The ${state.store.backend} store's registry cannot pin`);
  }
  return found(sessionId, await registry.pin(sessionId, pinned));
}

/** `manager.sweep(policy)`: a retention sweep whose erasures close the sessions the manager handed out. */
export function sweepSessionsOf<M extends SessionMessage>(
  state: ManagerState<M>,
  policy: RetentionPolicy,
  options?: SweepOptions,
): Promise<SweepReport> {
  return sweep(state.store.registry, (id, condition) => eraseOne(state, id, condition), policy, options);
}
