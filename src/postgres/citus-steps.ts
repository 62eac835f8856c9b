/**
 * What only a store distributed on Citus runs, beyond the statement shapes of its layout (sql/engines/postgres/layout.ts): the
 * routed append, the grouping of sessions by shard, the purge's steps on the workers and the open's conversion. The
 * Citus layout carries them (citus/layout.ts hands them over as it loads), so a module that needs one asks the
 * layout of its tables here, where a layout member (routedAppend, readsPerShard, placesOnWorkers) says so, and
 * imports nothing from citus/: the store loads citus/ only when opened with `distributed: true` (store.ts).
 */
import { SessionError } from "../errors.js";
import type { StatementLog } from "../sql/change-log/postgres-append-log.js";
import type { Executor, Query } from "../sql/engines/postgres/client.js";
import type { Layout } from "../sql/engines/postgres/layout.js";
import type { Tables } from "../sql/engines/postgres/tables.js";
import type { ShardNotices } from "../sql/purge/postgres-dead-rows.js";
import type { Horizon } from "../sql/purge/postgres-horizon.js";
import type { ReindexPlacements } from "../sql/purge/postgres-reindex.js";
import type { PurgeTable } from "../sql/purge/postgres-statistics.js";
import type { ClearGuard } from "../sql/sealing/postgres-key-cache.js";
import type { PurgeRecorder } from "../store/purge.js";
import type { AppendTry } from "./append-attempt.js";
import type { Outcome } from "./append-outcome.js";

/** An append of append.ts as the Citus layout runs it (citus/append-path.ts). */
export interface CitusAppend {
  messageId: string;
  parentId: string | null | undefined;
  /** The append statement and its parameters (append.ts). */
  sql: string;
  params: unknown[];
  /** The content is sealed under a key check: the guarded statement, never the call. */
  guarded: boolean;
  /** Content in clear under a clear guard (key-guard.ts): the call checks it, answering `keyed` when refused. */
  clear?: ClearGuard | undefined;
  log: { log: StatementLog; kind: "append" | "import" } | undefined;
}

/**
 * The steps only the Citus layout runs (see the module comment); the purge's reindex clean-up on the shard
 * placements among them (citus/reindex.ts).
 */
export interface CitusSteps extends ReindexPlacements {
  /** Runs `append` (a try of it: `on`) routed to its session's node (citus/append-path.ts). */
  append(on: AppendTry, append: CitusAppend): Promise<Outcome | null>;
  /** The append's `p` CTE over the parent read as parameters from `$at` on, and its spine arrays (citus/parent.ts). */
  parentCtes(at: number): { ctes: string; seq: string; depth: string };
  /** `sessionIds` grouped by the shard that holds them, so a read across sessions goes shard by shard. */
  byShard(executor: Executor, t: Tables, sessionIds: readonly string[]): Promise<string[][]>;
  /** Reads each worker's next transaction id as a purge starts; answers what holds back a horizon there from before it. */
  workerSnapshots(query: Query, horizon: Horizon): Promise<() => Promise<string[]>>;
  /** Drops the statistics an empty shard placement of `table` keeps (citus/purge.ts). */
  refreshPlacements(query: Query, table: PurgeTable, recorder: PurgeRecorder, timeout: number): Promise<void>;
  /** The workers' VACUUM notices relayed to the coordinator and the placements that must say a count (citus/dead-rows.ts). */
  shardNotices: ShardNotices;
  /** Rewrites `pg_statistic` on every worker, where the role may (citus/purge.ts, purge-catalog.ts). */
  vacuumWorkerStatistics(query: Query, recorder: PurgeRecorder, timeout: number): Promise<void>;
  /** Converts the tables on open (unless `sharded` already), places the tables added since, and creates the routed append's function. */
  open(executor: Executor, t: Tables, sharded: boolean): Promise<void>;
}

const carried = new WeakMap<Layout, CitusSteps>();

/** Gives `layout` its Citus steps (citus/layout.ts, as it loads). */
export function carrySteps(layout: Layout, steps: CitusSteps): Layout {
  carried.set(layout, steps);
  return layout;
}

/** The Citus steps of `t`'s layout; `UNSUPPORTED` on a layout without them (a layout member leads here first). */
export function citusSteps(t: { layout: Layout }): CitusSteps {
  const steps = carried.get(t.layout);
  if (!steps) throw new SessionError("UNSUPPORTED", `the ${t.layout.name} layout has no Citus steps`);
  return steps;
}
