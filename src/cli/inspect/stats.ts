import { hasAttachmentStore } from "../../contract/attachments.js";
import { hasSessionRegistry, type SessionInfo } from "../../contract/registry.js";
import type { SessionStore } from "../../contract/store.js";
import { sqliteFileBytes, sqlitePages } from "../../sqlite/maintenance.js";
import { SqliteStore } from "../../sqlite/store.js";
import type { OpenedStore } from "../store.js";
import { eachSessionOnce } from "../transfer/session-ids.js";
import { type UsageTotals, usageOf } from "../usage.js";
import { ownerSessionIds, requireTransfer } from "./sessions.js";

/** Totals over a whole store. */
export interface StoreStats {
  backend: string;
  location: string;
  /** The owner the totals keep to (`stats --owner`); absent for the whole store. */
  owner?: string;
  sessions: { total: number; registered: number; unregistered: number };
  messages: number;
  compactions: number;
  /** UTF-8 bytes of stored message JSON, every branch. */
  bytes: number;
  /** Offloaded media payloads: distinct payloads and their bytes, each stored once; null for an owner's totals. */
  attachments: { count: number; bytes: number } | null;
  /** The library's token estimate of every stored message (every branch, overlays not applied). */
  tokens: number;
  /** What the application recorded with addUsage, summed over registered sessions. */
  usage: UsageTotals;
  /** Context blocks and search entries of the store; null for an owner's totals (they are the store's). */
  blocks: number | null;
  entries: number | null;
  /** The SQLite file: bytes on disk (with its WAL) and pages; null on other backends. */
  file: { bytes: number; pageSize: number; pages: number; freePages: number } | null;
}

function addUsage(stats: StoreStats, info: SessionInfo): void {
  const usage = usageOf(info);
  for (const key of Object.keys(usage) as (keyof UsageTotals)[]) stats.usage[key] += usage[key];
}

/**
 * Reads every session's footprint (one pass over the store, one session at a time) and sums them; with `owner`,
 * the footprints of that owner's sessions only, and none of the store-wide counts (payloads, blocks, entries, file).
 */
export async function storeStats(opened: OpenedStore, owner?: string): Promise<StoreStats> {
  const store: SessionStore = opened.store;
  requireTransfer(store, "stats");
  const stats: StoreStats = {
    backend: store.backend,
    location: opened.location,
    ...(owner === undefined ? {} : { owner }),
    sessions: { total: 0, registered: 0, unregistered: 0 },
    messages: 0,
    compactions: 0,
    bytes: 0,
    attachments: { count: 0, bytes: 0 },
    tokens: 0,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0 },
    blocks: 0,
    entries: 0,
    file: null,
  };
  const ids = owner === undefined ? eachSessionOnce(store.transfer) : await ownerSessionIds(store, owner);
  for await (const id of ids) {
    const footprint = await store.transfer.footprint(id);
    if (!footprint) continue;
    stats.sessions.total++;
    stats.sessions[footprint.registered ? "registered" : "unregistered"]++;
    stats.messages += footprint.messages;
    stats.compactions += footprint.compactions;
    stats.bytes += footprint.bytes;
    stats.tokens += footprint.tokens;
    const info = footprint.registered && hasSessionRegistry(store) ? await store.registry.get(id) : null;
    if (info) addUsage(stats, info);
  }
  // Summing many floats drifts in the last digits; cents-level costs are what people read.
  stats.usage.cost = Math.round(stats.usage.cost * 1e6) / 1e6;
  if (owner !== undefined) return { ...stats, attachments: null, blocks: null, entries: null };
  if (hasAttachmentStore(store)) stats.attachments = await store.attachments.stats();
  let blocks = 0;
  let entries = 0;
  for await (const row of store.transfer.exportRows()) {
    if (row.kind === "block") blocks++;
    else entries++;
  }
  stats.blocks = blocks;
  stats.entries = entries;
  if (store instanceof SqliteStore) {
    stats.file = { bytes: sqliteFileBytes(opened.location), ...sqlitePages(store.driver) };
  }
  return stats;
}
