import { isStorableId } from "../../message.js";
import type { LegacyAgentSession } from "../../store/agent-legacy.js";
import { buildState, fromJson } from "../codec.js";
import type { AgentMessage, UsageEntry } from "../types.js";
import { headerKey, headerOf } from "./mapping.js";
import type { StoreSessionStorage } from "./store.js";
import type { AgentCapableStore } from "./store-writes.js";

/** The old tables of one prefix, read by the backend's SQL module (`src/sqlite/`, `src/postgres/agent-legacy.ts`). */
export interface LegacyTables {
  exists(): boolean | Promise<boolean>;
  sessionIds(): string[] | Promise<string[]>;
  read(id: string): LegacyAgentSession | undefined | Promise<LegacyAgentSession | undefined>;
}

/** The block recording that the old tables of `prefix` were moved in (so later opens only read this key). */
export function migratedMarker(prefix: string): string {
  return `_agent_storage_migrated:${prefix}`;
}

// Old storages accepted any id; the store needs storable, unique ids on a path, so the rare others get one.
function storableIds(messages: AgentMessage[]): AgentMessage[] {
  const seen = new Set<string>();
  return messages.map((message, index) => {
    let id = message?.id;
    if (
      typeof id !== "string" ||
      id.length === 0 ||
      !isStorableId(id) ||
      id.startsWith("compaction_") ||
      seen.has(id)
    ) {
      id = `legacy-${index}`;
      while (seen.has(id)) id = `${id}~`;
    }
    seen.add(id);
    return id === message.id ? message : { ...message, id };
  });
}

/**
 * Moves every session of the old agent tables into the store, once: a session whose header is stored already is
 * skipped, and writes are idempotent (deterministic ids, registry rows created once), so two processes opening the
 * same database at once both finish with every session stored once. The old tables are never modified.
 */
export function legacyMigration(
  tables: LegacyTables,
  prefix: string,
): (storage: StoreSessionStorage, store: AgentCapableStore) => Promise<void> {
  return async (storage, store) => {
    const marker = migratedMarker(prefix);
    if ((await store.blocks.getBlock(marker)) !== null) return;
    if (!(await tables.exists())) return;
    let moved = 0;
    for (const id of await tables.sessionIds()) {
      if ((await store.blocks.getBlock(headerKey(id))) !== null) continue;
      const old = await tables.read(id);
      if (!old) continue;
      const where = `old agent session ${id}`;
      const state = buildState({
        id,
        messages: storableIds(
          old.messages.map((body) => fromJson<AgentMessage>(body, `a message of ${where}`)),
        ),
        entries: old.usage.map((body) => fromJson<UsageEntry>(body, `a usage entry of ${where}`)),
        metadata: fromJson<Record<string, unknown>>(old.metadata, `the metadata of ${where}`),
        createdAt: old.createdAt,
        updatedAt: old.updatedAt,
        parentId: old.parentId,
      });
      await storage.write(store, id, state.messages, headerOf(state), false);
      moved++;
    }
    await store.blocks.setBlock(
      marker,
      JSON.stringify({ migratedAt: new Date().toISOString(), sessions: moved }),
    );
  };
}
