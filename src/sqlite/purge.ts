import { PurgeRecorder, type PurgeReport } from "../store/purge.js";
import type { SqlDriver } from "./connection/driver.js";

// The search indexes: FTS5 keeps a deleted row's terms in its segments (a tombstone marks them) until the
// segments are merged, and a term whose last row went can stay as a key on a leaf page.
const FTS_TABLES = ["agent_messages_fts", "agent_search_entries_fts"];

// Pages of index one merge step writes, each step its own short write transaction, so appends run between steps.
const MERGE_PAGES = 500;

// Enough steps to merge any index this store can hold into one segment; a bound so a purge always ends.
const MAX_MERGE_STEPS = 100_000;

function changes(driver: SqlDriver): number {
  return Number(driver.get<{ n: number }>("SELECT total_changes() AS n")?.n ?? 0);
}

// `merge` with a negative page count merges whatever segments there are, even fewer than automerge's trigger;
// a step that changes nothing means the index is one segment with no deleted entry left.
function mergeIndex(driver: SqlDriver, table: string): string | undefined {
  for (let i = 0; i < MAX_MERGE_STEPS; i++) {
    const before = changes(driver);
    driver.transaction(() =>
      driver.run(`INSERT INTO ${table} (${table}, rank) VALUES ('merge', ?)`, [-MERGE_PAGES]),
    );
    if (changes(driver) - before <= 1) return undefined;
  }
  return `still merging after ${MAX_MERGE_STEPS} steps`;
}

function secureDelete(driver: SqlDriver): number {
  return Number(Object.values(driver.get<Record<string, unknown>>("PRAGMA secure_delete") ?? {})[0] ?? 0);
}

/**
 * The purge of a SQLite store: merges the search indexes (dropping deleted rows' terms), then checkpoints the
 * write-ahead log into the database and truncates it. The connection's `secure_delete` (ON, set when the store
 * opens) zeroes every deleted cell and freed page as it goes; on a connection where it is off or FAST, freed pages
 * may keep old content, so the purge ends with a `VACUUM` (a rewrite that blocks writers while it runs).
 */
export function purgeSqlite(driver: SqlDriver): PurgeReport {
  const recorder = new PurgeRecorder("sqlite");
  const sync = (action: string, target: string | undefined, fn: () => string | undefined) =>
    recorder.runSync(action, target, fn);
  if (!driver.configurable) {
    // A Durable Object's SQLite refuses PRAGMA and manages its own storage: there is nothing this store can run.
    sync("none", undefined, () => "a Durable Object's storage is purged by the platform, not by this store");
    return recorder.report();
  }
  for (const table of FTS_TABLES) {
    const found = driver.get("SELECT 1 AS found FROM sqlite_master WHERE name = ?", [table]);
    if (found) sync("fts5 merge", table, () => mergeIndex(driver, table));
  }
  if (secureDelete(driver) !== 1) {
    sync("VACUUM", undefined, () => {
      driver.run("VACUUM");
      return undefined;
    });
  }
  sync("PRAGMA wal_checkpoint(TRUNCATE)", undefined, () => {
    const result = driver.get<{ busy: number; log: number; checkpointed: number }>(
      "PRAGMA wal_checkpoint(TRUNCATE)",
    );
    // busy: a reader's snapshot still needs pages of the log, which keeps them (and their old content) there.
    if (result && Number(result.busy) !== 0) {
      return `the write-ahead log is still in use by a reader (${result.checkpointed} of ${result.log} pages copied)`;
    }
    return undefined;
  });
  return recorder.report();
}
