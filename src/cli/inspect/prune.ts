import { hasSessionRegistry, type RegistryCapableStore } from "../../contract/registry.js";
import type { SessionStore } from "../../contract/store.js";
import { reclaimSqliteSpace, sqliteFileBytes } from "../../sqlite/connection/maintenance.js";
import { SqliteStore } from "../../sqlite/store.js";
import { CliError } from "../errors.js";
import type { Progress } from "../progress.js";
import { ownedBlocks, PROMPT_LABEL } from "./blocks.js";

/** A session old enough to be pruned. */
export interface PruneCandidate {
  id: string;
  name: string;
  /** Its last activity. */
  updatedAt: string;
}

/** How space was given back after deleting. */
export interface Reclaim {
  method: "VACUUM" | "autovacuum" | "none";
  bytesBefore: number | null;
  bytesAfter: number | null;
}

/** Fails unless the store has a registry: activity times live there. */
export function requireRegistry(store: SessionStore): asserts store is RegistryCapableStore {
  if (!hasSessionRegistry(store)) {
    throw new CliError(
      `prune needs the session registry, which the ${store.backend} store does not have yet`,
      "UNSUPPORTED",
    );
  }
}

/** Registered sessions whose last activity (`updated_at`) is before `cutoff`, newest activity first. */
export async function staleSessions(store: RegistryCapableStore, cutoff: string): Promise<PruneCandidate[]> {
  const stale: PruneCandidate[] = [];
  // By id, not by activity: offset pages over the activity order skip a session when another moves up meanwhile.
  for await (const info of store.registry.scan()) {
    if (info.updated_at < cutoff) stale.push({ id: info.id, name: info.name, updatedAt: info.updated_at });
  }
  // Newest activity first, as the confirmation lists them.
  return stale.sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
}

/**
 * Deletes whole sessions: registry row, messages, overlays, search rows and every block the session owns
 * (found before anything is deleted, since ownership is decided by which sessions exist).
 */
export async function deleteSessions(
  store: RegistryCapableStore,
  ids: readonly string[],
  progress: Progress,
): Promise<number> {
  const doomed = new Set(ids);
  const keys = new Map<string, string[]>(ids.map((id) => [id, [`${PROMPT_LABEL}_${id}`]]));
  for await (const { owner, block } of ownedBlocks(store)) {
    if (owner !== null && doomed.has(owner)) keys.get(owner)!.push(block.key);
  }
  let deleted = 0;
  for (const id of ids) {
    if (await store.registry.delete(id, { blockKeys: [...new Set(keys.get(id))] })) deleted++;
    progress.increment();
  }
  return deleted;
}

/** Gives freed space back: VACUUM on SQLite; Postgres' autovacuum does it by itself; nothing to do in memory. */
export function reclaimSpace(store: SessionStore, location: string): Reclaim {
  if (store instanceof SqliteStore) {
    const bytesBefore = sqliteFileBytes(location);
    reclaimSqliteSpace(store.driver);
    return { method: "VACUUM", bytesBefore, bytesAfter: sqliteFileBytes(location) };
  }
  if (store.backend === "postgres") return { method: "autovacuum", bytesBefore: null, bytesAfter: null };
  return { method: "none", bytesBefore: null, bytesAfter: null };
}

/** Milliseconds of a duration like `30d`, `12h`, `90m`, `2w` or `45s`; null when it is not one. */
export function parseDuration(text: string): number | null {
  const match = /^(\d+)(s|m|h|d|w)$/.exec(text.trim());
  if (!match) return null;
  const unit = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 604800e3 }[
    match[2] as "s" | "m" | "h" | "d" | "w"
  ];
  const ms = Number(match[1]) * unit;
  return ms > 0 && Number.isSafeInteger(ms) ? ms : null;
}
