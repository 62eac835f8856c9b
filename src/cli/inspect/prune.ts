import { hasContextStorage, hasRecords } from "../../contract/context.js";
import { hasSessionRegistry, type RegistryCapableStore } from "../../contract/registry.js";
import type { SessionStore } from "../../contract/store.js";
import { reclaimSqliteSpace, sqliteFileBytes } from "../../sqlite/maintenance.js";
import { SqliteStore } from "../../sqlite/store.js";
import { type ConditionalErase, recordEraser } from "../../store/retention.js";
import { CliError } from "../errors.js";
import { ownedBlocks, PROMPT_LABEL } from "./blocks.js";

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

/**
 * The erasure a sweep runs for the CLI: each session with every block and entry the store records as its own
 * (registry.erase removes them by record, whatever their label) and its frozen prompt (retention.ts recordEraser). On a store without records, the CLI has no
 * templates to name a session's block labels, so ownership is read from the stored keys, once, before the first
 * erasure: its frozen prompt and the blocks whose key names it.
 */
export function cliEraser(store: RegistryCapableStore, ids: readonly string[]): ConditionalErase {
  const registry = store.registry;
  if (typeof registry.erase !== "function") {
    throw new CliError(
      `prune needs erasure, which the ${store.backend} store's registry does not have`,
      "UNSUPPORTED",
    );
  }
  const erase = registry.erase.bind(registry);
  if (hasContextStorage(store) && hasRecords(store.blocks)) return recordEraser(erase);
  let owned: Promise<Map<string, string[]>> | undefined;
  const ownedKeys = async (): Promise<Map<string, string[]>> => {
    const keys = new Map<string, string[]>(ids.map((id) => [id, [`${PROMPT_LABEL}_${id}`]]));
    for await (const { owner, block } of ownedBlocks(store)) {
      if (owner !== null) keys.get(owner)?.push(block.key);
    }
    return keys;
  };
  return async (id, condition) => {
    owned ??= ownedKeys();
    const keys = (await owned).get(id) ?? [`${PROMPT_LABEL}_${id}`];
    return erase(id, { blockKeys: [...new Set(keys)], condition });
  };
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

/**
 * Milliseconds of a duration like `30d`, `12h`, `90m`, `2w` or `45s`; null when it is not one. `0s` is one, as
 * `maxAgeMs: 0` is for the library: every unpinned session inactive since now.
 */
export function parseDuration(text: string): number | null {
  const match = /^(\d+)(s|m|h|d|w)$/.exec(text.trim());
  if (!match) return null;
  const unit = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 604800e3 }[
    match[2] as "s" | "m" | "h" | "d" | "w"
  ];
  const ms = Number(match[1]) * unit;
  return Number.isSafeInteger(ms) ? ms : null;
}
