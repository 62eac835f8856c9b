import { hasSessionRegistry, type RegistryCapableStore, type SessionInfo } from "../../contract/registry.js";
import type { SessionStore } from "../../contract/store.js";
import { hasTransfer, type TransferCapableStore } from "../../contract/transfer.js";

import { CliError } from "../errors.js";
import { type UsageTotals, usageOf } from "../usage.js";

/** How `ls` and the viewer show the empty id: the session of a Session created without `forSession`. */
export const DEFAULT_SESSION_LABEL = "(default session)";

/** One session as the CLI and the viewer show it: its registry row (when registered) and its stored size. */
export interface SessionSummary {
  id: string;
  registered: boolean;
  name: string | null;
  /** Present when the name is sealed and the store cannot open it (opened without the owner's key): name is "". */
  nameSealed?: true;
  parentSessionId: string | null;
  model: string | null;
  source: string | null;
  /** Whose session it is (see docs/MANAGER.md, Owners); null when it has none or is unregistered. */
  owner: string | null;
  /** True when the session is pinned (a retention sweep never erases it); false when not, or unregistered. */
  pinned: boolean;
  endReason: string | null;
  createdAt: string | null;
  /** Last activity (the registry's `updated_at`); null for an unregistered session. */
  updatedAt: string | null;
  usage: UsageTotals | null;
  /** Stored messages on every branch; null when the store cannot tell (no transfer capability). */
  messages: number | null;
  compactions: number | null;
  bytes: number | null;
  tokens: number | null;
  leafId: string | null;
}

/** Fails with a clear message when the store lacks what a command needs. */
export function requireTransfer(store: SessionStore, what: string): asserts store is TransferCapableStore {
  if (!hasTransfer(store)) {
    throw new CliError(
      `${what} needs session export support, which the ${store.backend} store does not have yet`,
      "UNSUPPORTED",
    );
  }
}

function fromInfo(id: string, info: SessionInfo | null): SessionSummary {
  const sealed = info?.nameSealed ? { nameSealed: true as const } : {};
  return {
    ...sealed,
    id,
    registered: info !== null,
    name: info?.name ?? null,
    parentSessionId: info?.parent_session_id ?? null,
    model: info?.model ?? null,
    source: info?.source ?? null,
    owner: info?.owner ?? null,
    pinned: info?.pinned === true,
    endReason: info?.end_reason ?? null,
    createdAt: info?.created_at ?? null,
    updatedAt: info?.updated_at ?? null,
    usage: info ? usageOf(info) : null,
    messages: null,
    compactions: null,
    bytes: null,
    tokens: null,
    leafId: null,
  };
}

/** The summary of one session, or null when nothing is stored or registered under `id`. */
export async function summarize(
  store: SessionStore,
  id: string,
  known?: SessionInfo | null,
): Promise<SessionSummary | null> {
  const info = known !== undefined ? known : hasSessionRegistry(store) ? await store.registry.get(id) : null;
  if (!hasTransfer(store)) {
    if (info) return fromInfo(id, info);
    // Without a registry or transfer, a session exists when it holds a message.
    const leaf = await store.session(id).getLatestLeaf();
    return leaf ? { ...fromInfo(id, null), leafId: leaf.id } : null;
  }
  const footprint = await store.transfer.footprint(id);
  if (!footprint && !info) return null;
  return {
    ...fromInfo(id, info),
    messages: footprint?.messages ?? 0,
    compactions: footprint?.compactions ?? 0,
    bytes: footprint?.bytes ?? 0,
    tokens: footprint?.tokens ?? 0,
    leafId: footprint?.leafId ?? null,
  };
}

/**
 * The summary of a session, or a `NOT_FOUND` error naming it; with `owner`, a session of another owner (or of none)
 * is `NOT_FOUND` too, with the same message, so an owner's view cannot tell it from an unknown id.
 */
export async function requireSession(
  store: SessionStore,
  id: string,
  owner?: string,
): Promise<SessionSummary> {
  const summary = await summarize(store, id);
  if (!summary || (owner !== undefined && summary.owner !== owner)) {
    throw new CliError(`session ${JSON.stringify(id)} not found`, "NOT_FOUND");
  }
  return summary;
}

/** Fails with a clear message on a store without a registry, which keeps no owners. */
export function requireOwners(store: SessionStore): asserts store is RegistryCapableStore {
  if (!hasSessionRegistry(store)) {
    throw new CliError(
      `the ${store.backend} store keeps no owners: it has no session registry`,
      "UNSUPPORTED",
    );
  }
}

/** The ids of `owner`'s sessions, newest activity first (one range of the registry's owner index). */
export async function ownerSessionIds(store: SessionStore, owner: string): Promise<string[]> {
  requireOwners(store);
  return (await store.registry.list({ owner })).map((info) => info.id);
}

/**
 * Registered sessions newest activity first, then sessions that hold data but were never registered (written
 * through a plain Session), by id. `limit` bounds how many are read. With `owner`, only that owner's sessions
 * (unregistered ones have no owner).
 */
export async function listSessions(
  store: SessionStore,
  limit = Number.POSITIVE_INFINITY,
  owner?: string,
): Promise<SessionSummary[]> {
  if (owner !== undefined) {
    requireOwners(store);
    const rows = await store.registry.list({
      owner,
      ...(Number.isFinite(limit) ? { limit } : {}),
    });
    const result: SessionSummary[] = [];
    for (const info of rows) {
      const summary = await summarize(store, info.id, info);
      if (summary) result.push(summary);
    }
    return result;
  }
  if (!hasSessionRegistry(store) && !hasTransfer(store)) {
    throw new CliError(
      `the ${store.backend} store can list sessions only with a session registry`,
      "UNSUPPORTED",
    );
  }
  const result: SessionSummary[] = [];
  const registered = new Set<string>();
  if (hasSessionRegistry(store)) {
    const rows = await store.registry.list(Number.isFinite(limit) ? { limit } : {});
    for (const info of rows) {
      registered.add(info.id);
      const summary = await summarize(store, info.id, info);
      if (summary) result.push(summary);
    }
  }
  if (hasTransfer(store)) {
    for await (const id of store.transfer.sessionIds()) {
      if (result.length >= limit) break;
      if (registered.has(id)) continue;
      // Registered ids come first in sessionIds(); one listed only now was registered after the list() above.
      const summary = await summarize(store, id);
      if (summary && !summary.registered) result.push(summary);
    }
  }
  return result;
}
