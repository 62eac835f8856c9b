/**
 * The purge of a SQLite store, written for SQLite alone: what leaves a deleted byte in its files is SQLite's own
 * (FTS5 segments, sqlite-vec's table, sqlite_stat4 samples, freed pages without `secure_delete`, the write-ahead
 * log), so its steps are merges, a drain, `ANALYZE`, `VACUUM` and a checkpoint, not Postgres' table rewrites
 * (postgres/purge.ts). Both derive their work from the owner-data declaration and report through PurgeRecorder.
 */
import { MissingDependencyError } from "../../errors.js";
import { tablesPurgedBy } from "../../store/owner-data.js";
import { PurgeRecorder, type PurgeReport } from "../../store/purge.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { SQLITE_OWNER_DATA } from "../owner-data/sqlite.js";

// The search indexes (sql/owner-data/sqlite.ts): FTS5 keeps a deleted row's terms in its segments (a tombstone marks them)
// until the segments are merged, and a term whose last row went can stay as a key on a leaf page.
const FTS_TABLES = tablesPurgedBy(SQLITE_OWNER_DATA, "fts-merge");

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

const found = (driver: SqlDriver, table: string) =>
  driver.get("SELECT 1 AS found FROM sqlite_master WHERE name = ?", [table]) !== undefined;

/**
 * sqlite-vec's rows of deleted vectors (a connection without the extension, the CLI's prune or a store opened
 * without an embedder, deletes a vector row and leaves its seq in the tombstone table): removed by `drain` when it
 * loads the extension into this connection, else the step says how many wait.
 */
async function drainVectors(driver: SqlDriver, drain: () => Promise<unknown>): Promise<string | undefined> {
  const waiting = () =>
    Number(driver.get<{ n: number }>("SELECT count(*) AS n FROM agent_message_vectors_gone")?.n);
  if (waiting() === 0) return undefined;
  let why = "this connection cannot load extensions";
  try {
    await drain();
  } catch (error) {
    // Not installed: the report says so, as it says what else it could not do; any other failure is the purge's.
    if (!(error instanceof MissingDependencyError)) throw error;
    why = error.message;
  }
  const left = waiting();
  if (left === 0) return undefined;
  return `${left} deleted messages' vectors are still in sqlite-vec's table (${why}): purge from a process that can load sqlite-vec`;
}

/**
 * The purge of a SQLite store: merges the search indexes (dropping deleted rows' terms), removes deleted vectors
 * from sqlite-vec's table (`drain`, handed in by the store, loads the extension and removes them), runs `ANALYZE` again where the database keeps statistics
 * (sqlite_stat4 samples index keys: ids, names, search terms), then checkpoints the write-ahead log into the
 * database and truncates it. The connection's `secure_delete` (ON, set when the store opens) zeroes every deleted
 * cell and freed page as it goes; on a connection where it is off or FAST, freed pages may keep old content, so the
 * purge ends with a `VACUUM` (a rewrite that blocks writers while it runs).
 */
export async function purgeSqlite(driver: SqlDriver, drain: () => Promise<unknown>): Promise<PurgeReport> {
  const recorder = new PurgeRecorder("sqlite");
  const sync = (action: string, target: string | undefined, fn: () => string | undefined) =>
    recorder.runSync(action, target, fn);
  if (!driver.configurable) {
    // A Durable Object's SQLite refuses PRAGMA and manages its own storage: there is nothing this store can run.
    sync("none", undefined, () => "a Durable Object's storage is purged by the platform, not by this store");
    return recorder.report();
  }
  for (const table of FTS_TABLES) {
    if (found(driver, table)) sync("fts5 merge", table, () => mergeIndex(driver, table));
  }
  if (found(driver, "agent_message_vectors_gone")) {
    await recorder.run("sqlite-vec drain", "agent_message_vectors_vec", () => drainVectors(driver, drain));
  }
  // After the merges, so the samples of the search index's terms are of the merged, live ones.
  if (tablesPurgedBy(SQLITE_OWNER_DATA, "reanalyze").some((table) => found(driver, table))) {
    sync("ANALYZE", undefined, () => {
      driver.run("ANALYZE");
      return undefined;
    });
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
