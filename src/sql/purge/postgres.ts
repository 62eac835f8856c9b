/**
 * The purge of a Postgres (PGlite, Citus) store, written for Postgres alone: a dead row's bytes stay in its table's
 * pages, TOAST and indexes until the table is rewritten, and its values in `pg_statistic` until it is analyzed
 * again, while a transaction older than the purge keeps dead rows alive on the coordinator and on every Citus
 * worker; so its steps are `VACUUM FULL` (or `VACUUM` and `REINDEX`, postgres-reindex.ts), `ANALYZE` with the
 * statistics of empty tables dropped (purge-statistics.ts, citus/purge.ts), the rewrite of `pg_statistic` that drops the replaced
 * statistics' dead tuples on every node, PGlite's WAL segments replaced (postgres-catalog.ts), the wait for what
 * holds the horizon back (postgres-horizon.ts) and each VACUUM's own count of the dead rows it kept
 * (postgres-dead-rows.ts, on Citus every worker's too), not SQLite's merges and checkpoint (sqlite/purge.ts). Both derive their work on tables from the owner-data
 * declaration and report through PurgeRecorder; the catalog's step covers every table's statistics at once, so a
 * table added to the declaration needs nothing more.
 */
import { z } from "zod";
import { parseInput } from "../../schema/parse.js";
import { numberWhere } from "../../schema/rules.js";
import { rule } from "../../schema/to-session-error.js";
import { tablesPurgedBy } from "../../store/owner-data.js";
import { type PurgeOptions, PurgeRecorder, type PurgeReport } from "../../store/purge.js";
import type { Executor, NoticesOf, Query } from "../engines/postgres/client.js";
import type { Tables } from "../engines/postgres/tables.js";
import { POSTGRES_OWNER_DATA } from "../owner-data/postgres.js";
import { replaceWal, vacuumStatistic } from "./postgres-catalog.js";
import { DeadRows, type ShardNotices } from "./postgres-dead-rows.js";
import { type Horizon, incompleteFor, olderThanNow, waitForOlderHolders } from "./postgres-horizon.js";
import { dropLeftCopies, type ReindexPlacements, vacuumTables } from "./postgres-reindex.js";
import { type PurgeTable, refreshStatistics } from "./postgres-statistics.js";
import { placedStep, vacuumStep } from "./postgres-vacuum.js";

/** How a Postgres purge gets rid of dead rows' bytes: `"rewrite"` (default) or `"vacuum"` (see docs/PRIVACY.md). */
export type PostgresPurgeMode = "rewrite" | "vacuum";

/** Options of a Postgres store's `purge()`. */
export interface PostgresPurgeOptions extends PurgeOptions {
  /**
   * `"rewrite"` (default): `VACUUM FULL` each table, which writes its live rows, TOAST and indexes to new files, so
   * no page keeps a deleted byte; each table is locked against writes while it is rewritten (on Citus a table whose
   * VACUUM FULL across its shards takes longer than `lockTimeoutMs` is cancelled, reported incomplete:
   * postgres-vacuum.ts). `"vacuum"`: `VACUUM`
   * and `REINDEX TABLE CONCURRENTLY`, which never block appends but leave deleted bytes in the free space of pages
   * that still hold live rows until those pages are written again; a reindex gives up after waiting
   * `lockTimeoutMs` for older transactions (on Citus when the whole reindex takes longer), reported incomplete,
   * and the invalid index copies it leaves are dropped (docs/PRIVACY.md). Either mode then runs `ANALYZE` on each
   * table, drops the statistics of a table left empty (which holds that empty table's lock for a moment) and
   * rewrites the catalog `pg_statistic` (a moment's lock on it, never waited for in its queue), on PGlite its WAL
   * segments too.
   */
  mode?: PostgresPurgeMode;
}

// Every table a store may have (sql/owner-data/postgres.ts, which the schema test holds to the migrations): the migrated ones,
// the change log's and the vector channel's (both created on first use). A name missing from the database is skipped.
const TABLES = tablesPurgedBy(POSTGRES_OWNER_DATA, "rewrite");

/** The store's tables that exist (quoted, qualified names and their declared names), in a fixed order. */
export async function storeTables(query: Query, t: Tables): Promise<PurgeTable[]> {
  const names = TABLES.map((name) => `${t.schema ? `"${t.schema}".` : ""}"${t.prefix}${name}"`);
  const rows = await query<{ name: string; found: boolean }>(
    "SELECT n.name, to_regclass(n.name) IS NOT NULL AS found FROM unnest($1::text[]) WITH ORDINALITY AS n(name, i) ORDER BY n.i",
    [names],
  );
  return rows.flatMap((r, i) => (r.found ? [{ name: r.name, declared: TABLES[i] as string }] : []));
}

/** A purge's options: how it rewrites (`mode`) and how long a step waits for a lock (`lockTimeoutMs`). */
const optionsSchema = z.looseObject(
  {
    mode: z.enum(["rewrite", "vacuum"], rule('mode must be "rewrite" or "vacuum"')).default("rewrite"),
    lockTimeoutMs: numberWhere(
      "lockTimeoutMs must be a whole number >= 1",
      (n) => Number.isInteger(n) && n >= 1,
    ).default(2000),
  },
  rule("purge() options must be an object"),
);

/** What the purge runs on a Citus cluster's workers: the Citus layout's steps, handed in by the store. */
export interface PurgeWorkers extends ReindexPlacements {
  /** The reader of what holds back `horizon` on the workers from before now (postgres-horizon.ts, on each worker). */
  workerSnapshots(query: Query, horizon: Horizon): Promise<() => Promise<string[]>>;
  /** The statistics of `table`'s placements refreshed on the workers. */
  refreshPlacements(query: Query, table: PurgeTable, recorder: PurgeRecorder, timeout: number): Promise<void>;
  /** The workers' VACUUM notices relayed, and the shard placements each table's must hear from. */
  shardNotices: ShardNotices;
  /** Each worker's pg_statistic rewritten. */
  vacuumWorkerStatistics(query: Query, recorder: PurgeRecorder, timeout: number): Promise<void>;
}

/**
 * The purge of a Postgres (or PGlite) store's tables, one table at a time (see {@link PostgresPurgeOptions});
 * `workers`, on a layout that places on Citus workers, the steps run there too.
 */
export async function purgePostgres(
  executor: Executor,
  t: Tables,
  options: PostgresPurgeOptions = {},
  workers?: PurgeWorkers,
): Promise<PurgeReport> {
  const { mode, lockTimeoutMs: timeout } = parseInput(optionsSchema, options);
  const recorder = new PurgeRecorder("postgres");
  const onWorkers = workers && ((q: Query, horizon: Horizon) => workers.workerSnapshots(q, horizon));
  const pinned =
    executor.pinned ?? ((fn: (query: Query, noticesOf?: NoticesOf) => Promise<void>) => fn(executor.query));
  await pinned(async (query, noticesOf) => {
    // PGlite is one connection: no other transaction can hold a snapshot there.
    const others = executor.kind !== "pglite";
    // A transaction open when the purge starts holds back the horizon while the tables are rewritten, even if it
    // ends before the purge does: wait for those to end first, or say the purge cannot be complete.
    const held = others
      ? await waitForOlderHolders(await olderThanNow(query, "tables", onWorkers), timeout)
      : undefined;
    const tables = await storeTables(query, t);
    // A concurrent reindex cancelled (by its timeout, or a purge killed) left invalid index copies: dropped first.
    if (others) await dropLeftCopies(query, tables, timeout, recorder, workers);
    // Each VACUUM runs VERBOSE and says how many dead rows it had to keep: the proof that none is left, which sees
    // what the wait above cannot (postgres-dead-rows.ts).
    const dead = new DeadRows(noticesOf, workers?.shardNotices);
    const work = async (some: readonly PurgeTable[]) => {
      const older = () => olderThanNow(query, "tables", onWorkers);
      if (mode === "vacuum")
        await vacuumTables(query, executor.kind, dead, some, timeout, recorder, older, workers);
      else await rewriteTables(query, dead, some, timeout, recorder, workers);
    };
    await work(tables);
    const kept = dead.keeping();
    if (others && kept.length > 0) {
      // Held by something the wait did not count then (a transaction begun during the rewrite with an older
      // horizon, a holder it cannot see): wait again, from now, and do those tables once more.
      await waitForOlderHolders(await olderThanNow(query, "tables", onWorkers), timeout);
      await work(tables.filter((table) => kept.includes(table.name)));
    }
    // On Citus the counts are the coordinator's tables' and, relayed, every shard placement's (citus/dead-rows.ts).
    if (dead.reading) await recorder.run("dead rows", undefined, () => dead.note());
    await refreshAll(query, workers, tables, timeout, recorder);
    // The ANALYZE just run replaced statistics rows, which a transaction begun before it may still see, and the
    // rewrite of pg_statistic would keep: the same wait, from now (postgres-catalog.ts).
    const heldStatistics = others
      ? await waitForOlderHolders(await olderThanNow(query, "catalog", onWorkers), timeout)
      : undefined;
    await vacuumStatistic(query, recorder, timeout);
    await workers?.vacuumWorkerStatistics(query, recorder, timeout);
    // Last: the WAL written so far holds every deleted row (and the rewrites' pages hold none).
    if (executor.kind === "pglite") await replaceWal(query, recorder);
    if (others) {
      const holders = [...new Set([...(held ?? []), ...(heldStatistics ?? [])])];
      await recorder.run("open snapshots", undefined, () => incompleteFor(holders));
    }
  });
  return recorder.report();
}

/**
 * Statistics of every table refreshed after the rewrite (postgres-statistics.ts), each step giving up on a lock not
 * granted within `timeout` ms (dropping an empty table's statistics takes the table's lock for a moment).
 */
async function refreshAll(
  query: Query,
  placements: PurgeWorkers | undefined,
  tables: PurgeTable[],
  timeout: number,
  recorder: PurgeRecorder,
) {
  await query(`SET lock_timeout = ${timeout}`);
  try {
    for (const table of tables) {
      // ANALYZE waits on a worker as VACUUM does (postgres-vacuum.ts).
      const placed = (await placements?.placed(query, table.name)) ?? false;
      await refreshStatistics(query, table, recorder, (sql) =>
        placedStep(query, placed, timeout, sql.slice(0, sql.indexOf(" ")), () => query(sql)),
      );
      await placements?.refreshPlacements(query, table, recorder, timeout);
    }
  } finally {
    await query("RESET lock_timeout");
  }
}

/**
 * VACUUM FULL of each table, giving up on a table whose lock is not granted within `timeout` ms (on Citus, whose
 * VACUUM FULL on the placements does not finish within it: postgres-vacuum.ts).
 */
async function rewriteTables(
  query: Query,
  dead: DeadRows,
  tables: readonly PurgeTable[],
  timeout: number,
  recorder: PurgeRecorder,
  placements?: ReindexPlacements,
) {
  // VACUUM FULL locks out appends: waiting for its lock would queue every append behind it, so it gives up
  // after `timeout` instead.
  await query(`SET lock_timeout = ${timeout}`);
  try {
    for (const { name: table } of tables) {
      const placed = (await placements?.placed(query, table)) ?? false;
      await vacuumStep(query, dead, ["FULL"], table, placed, timeout, recorder);
    }
  } finally {
    await query("RESET lock_timeout");
  }
}
