/**
 * What a purge on a Citus coordinator does on the workers (docs/PRIVACY.md, "Statistics"; docs/POSTGRES.md). The
 * coordinator's `VACUUM FULL` and `ANALYZE` of a distributed or reference table reach every shard placement, but a
 * placement left empty keeps the statistics it had (purge-statistics.ts), and a worker's own open transactions keep
 * its shards' deleted rows, which the coordinator's `pg_stat_activity` does not show. Each worker is asked directly.
 */
import { StorageError } from "../../errors.js";
import type { Query } from "../../sql/engines/postgres/client.js";
import {
  lockedStatistic,
  MAY_VACUUM_STATISTIC,
  refusedStatistic,
  STATISTIC,
  STATISTIC_FILE,
  VACUUM_STATISTIC,
} from "../../sql/purge/postgres-catalog.js";
import { type Horizon, holdersSql } from "../../sql/purge/postgres-horizon.js";
import {
  dropStatisticsSql,
  type PurgeTable,
  statisticsColumns,
} from "../../sql/purge/postgres-statistics.js";
import type { PurgeRecorder } from "../../store/purge.js";

/** A worker node and what it answered. */
export interface NodeResult {
  nodename: string;
  nodeport: number;
  success: boolean;
  result: string;
}

/** Each active worker's next transaction id as the purge starts, by `host:port`. */
type WorkerStarts = Map<string, { host: string; port: number; next: string }>;

/** A command on every active worker; and one command each on the workers named (parallel arrays). */
const ON_WORKERS = "SELECT nodename, nodeport, success, result FROM run_command_on_workers($1)";
const ON_NODES =
  "SELECT node_name AS nodename, node_port AS nodeport, success, result FROM master_run_on_worker($1::text[], $2::int[], $3::text[], true)";

/** A node as `host:port`. */
export const nodeOf = (row: { nodename: string; nodeport: number }) => `${row.nodename}:${row.nodeport}`;

/** The nodes that failed, each with its error, or undefined when none did. */
export function failed(rows: readonly NodeResult[]): string | undefined {
  const bad = rows.filter((r) => !r.success);
  if (bad.length === 0) return undefined;
  return bad.map((r) => `${nodeOf(r)}: ${r.result}`).join("; ");
}

/**
 * Reads each worker's next transaction id as the purge starts (a worker counts its own), and answers the reader of
 * what holds back `horizon` on the workers from before that: the coordinator's own wait (postgres-horizon.ts), each
 * worker asked for its backends, prepared transactions and replication slots.
 */
export async function workerSnapshots(query: Query, horizon: Horizon): Promise<() => Promise<string[]>> {
  const starts = await workerStarts(query);
  return () => olderWorkerHolders(query, starts, horizon);
}

/** Each worker's next transaction id (a worker counts its own), read as the purge starts. */
async function workerStarts(query: Query): Promise<WorkerStarts> {
  const rows = await query<NodeResult>(ON_WORKERS, ["SELECT txid_snapshot_xmax(txid_current_snapshot())"]);
  const error = failed(rows);
  if (error) throw new StorageError(`a purge could not read the workers' transaction ids: ${error}`);
  return new Map(rows.map((r) => [nodeOf(r), { host: r.nodename, port: r.nodeport, next: r.result }]));
}

/**
 * The holders on the workers older than the purge (holdersSql, at most 10 of each kind a worker), each as
 * `host:port <holder>`; one statement a worker, its holders as a JSON array (a prepared transaction's gid may hold
 * any character).
 */
async function olderWorkerHolders(query: Query, starts: WorkerStarts, horizon: Horizon): Promise<string[]> {
  if (starts.size === 0) return [];
  const nodes = [...starts.values()];
  const rows = await query<NodeResult>(ON_NODES, [
    nodes.map((n) => n.host),
    nodes.map((n) => n.port),
    nodes.map(
      (n) =>
        `SELECT coalesce(json_agg(h.holder), '[]')::text FROM (${holdersSql(horizon, String(BigInt(n.next)))}) h`,
    ),
  ]);
  const error = failed(rows);
  if (error) throw new StorageError(`a purge could not read the workers' transactions: ${error}`);
  return rows.flatMap((r) => (JSON.parse(r.result) as string[]).map((holder) => `${nodeOf(r)} ${holder}`));
}

/** True when `table` is a Citus table (distributed or reference), whose rows live in shard placements. */
export async function sharded(query: Query, table: string): Promise<boolean> {
  const [row] = await query<{ found: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = $1::regclass) AS found",
    [table],
  );
  return row?.found === true;
}

/**
 * Drops the statistics an empty placement of `table` keeps, on every placement (coordinator's included): a
 * placement with rows was analyzed with the table. Nothing for a coordinator table (purge-statistics.ts has it).
 */
export async function refreshPlacementStatistics(
  query: Query,
  table: PurgeTable,
  recorder: PurgeRecorder,
  timeout: number,
): Promise<void> {
  if (!(await sharded(query, table.name))) return;
  const alter = await dropStatisticsSql(query, table.name, statisticsColumns(table.declared), "%1$s");
  if (!alter) return;
  // The shard's name is the command's one format argument; an empty placement's ALTER rewrites nothing, and waits
  // for its lock no longer than the purge's other steps do.
  const command = `DO $purge$ BEGIN IF NOT EXISTS (SELECT 1 FROM %1$s) THEN
    PERFORM set_config('lock_timeout', '${timeout}', true); EXECUTE '${alter}'; END IF; END $purge$`;
  await recorder.run("drop statistics of empty placements", table.name, async () => {
    const rows = await query<NodeResult>(
      "SELECT nodename, nodeport, success, result FROM run_command_on_placements($1::regclass, $2)",
      [table.name, command],
    );
    const error = failed(rows);
    return error === undefined ? undefined : `not run on every placement: ${error}`;
  });
}

/**
 * Rewrites `pg_statistic` on every worker (purge-catalog.ts): their shards' statistics are replaced there, so the
 * dead tuples are each worker's own. A worker where the role may not vacuum it, or where it stays locked until
 * `timeout` ms have passed (tries repeated, none waiting in the lock queue), is named in the step's incomplete note.
 */
export async function vacuumWorkerStatistics(
  query: Query,
  recorder: PurgeRecorder,
  timeout: number,
): Promise<void> {
  await recorder.run("VACUUM FULL on workers", STATISTIC, async () => {
    const onAll = (sql: string) => query<NodeResult>(ON_WORKERS, [sql]);
    const may = await onAll(MAY_VACUUM_STATISTIC);
    const error = failed(may);
    if (error) return `not run on every worker: ${error}`;
    const refused = may.filter((r) => r.result !== "true").map((r) => ` on ${nodeOf(r)}`);
    let left = may.filter((r) => r.result === "true");
    const files = new Map((await onAll(STATISTIC_FILE)).map((r) => [nodeOf(r), r.result]));
    const deadline = Date.now() + timeout;
    while (left.length > 0) {
      const on = (sql: string) =>
        query<NodeResult>(ON_NODES, [
          left.map((n) => n.nodename),
          left.map((n) => n.nodeport),
          left.map(() => sql),
        ]);
      const tried = failed(await on(VACUUM_STATISTIC));
      if (tried) return `not run on every worker: ${tried}`;
      const now = await on(STATISTIC_FILE);
      const skipped = new Set(now.filter((r) => r.result === files.get(nodeOf(r))).map(nodeOf));
      left = left.filter((n) => skipped.has(nodeOf(n)));
      if (left.length === 0 || Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const notes = [
      ...refused.map(refusedStatistic),
      ...left.map((n) => lockedStatistic(` on ${nodeOf(n)}`, timeout)),
    ];
    return notes.length === 0 ? undefined : notes.join("; ");
  });
}
