/**
 * What holds back the horizon under which a Postgres purge's `VACUUM` may remove dead rows, read before the purge
 * rewrites (docs/PRIVACY.md, "Open snapshots"): a backend's snapshot or transaction id older than the purge (in
 * another database its transaction id: VACUUM FULL's snapshot counts those), a
 * prepared transaction (no backend shows it) and a replication slot's `xmin` (a standby's `hot_standby_feedback`
 * through its slot, a logical slot) or, for the catalog `pg_statistic`, its `catalog_xmin`. This is the wait before
 * the work; the proof after it is each `VACUUM`'s own count of the dead rows it kept (postgres-dead-rows.ts).
 */
import type { Query } from "../engines/postgres/client.js";

/**
 * The backends whose snapshots hold back this database's dead rows: its own, and a backend of no database, whose
 * snapshot the horizon of VACUUM FULL counts in every database (a walsender with hot_standby_feedback; Postgres
 * releases before the PROC_AFFECTS_ALL_HORIZONS flag counted every backend of database 0).
 */
export const HOLDS_THIS_DATABASE = "(datname = current_database() OR datname IS NULL)";

/** Which horizon a wait is for: the store's tables', or the catalog's (a logical slot's catalog_xmin holds it too). */
export type Horizon = "tables" | "catalog";

/** A holder of the horizon: `pid <n>`, a prepared transaction or a slot; on a Citus worker, `host:port` before it. */
export type Holder = string;

/**
 * The reader of what holds back `horizon` from before now: the next transaction id now, on the node and (through
 * `onWorkers`, which reads each Citus worker's own) on every worker; a transaction whose snapshot is older may still
 * see rows deleted before now, and VACUUM (FULL too) keeps such "recently dead" rows.
 */
export async function olderThanNow(
  query: Query,
  horizon: Horizon,
  onWorkers?: (query: Query, horizon: Horizon) => Promise<() => Promise<string[]>>,
): Promise<() => Promise<Holder[]>> {
  const [now] = await query<{ next: string }>(
    "SELECT txid_snapshot_xmax(txid_current_snapshot())::text AS next",
  );
  const workers = onWorkers ? await onWorkers(query, horizon) : async () => [];
  return async () => [...(now ? await olderHolders(query, now.next, horizon) : []), ...(await workers())];
}

/**
 * The query of the holders (at most 10 of each kind) older than the purge (before the SQL expression `next`), one
 * `holder` column: backends of this database or of none with an older snapshot or transaction id, backends of any
 * database with an older transaction id, prepared
 * transactions of this database with an older id (a prepared transaction keeps its id until it commits or rolls
 * back), and replication slots with an older `xmin` (slots count in every database) or, for the catalog,
 * `catalog_xmin`. `age(NULL)` is NULL, so a slot without one is not counted. A Citus worker runs it on its own
 * (citus/purge.ts), with its own next transaction id as `next`.
 */
export function holdersSql(horizon: Horizon, next: string): string {
  const older = `txid_snapshot_xmax(txid_current_snapshot()) - ${next}`;
  const slotAge = horizon === "catalog" ? "GREATEST(age(xmin), age(catalog_xmin))" : "age(xmin)";
  // A backend of another database counts by its transaction id only: VACUUM's horizon ignores its snapshot, but
  // VACUUM FULL's own snapshot counts every running transaction id of the server, and its rewrite (of a table, and
  // of pg_statistic, whose replaced rows no step counts) keeps the rows deleted after such an id was taken.
  return `(SELECT 'pid ' || pid AS holder FROM pg_stat_activity
       WHERE pid <> pg_backend_pid()
         AND (${HOLDS_THIS_DATABASE} AND GREATEST(age(backend_xmin), age(backend_xid)) >= ${older}
           OR age(backend_xid) >= ${older})
       ORDER BY pid LIMIT 10)
     UNION ALL
     (SELECT 'prepared transaction ' || quote_literal(gid) FROM pg_prepared_xacts
       WHERE database = current_database() AND age(transaction) >= ${older}
       ORDER BY prepared LIMIT 10)
     UNION ALL
     (SELECT 'replication slot ' || quote_literal(slot_name::text) FROM pg_replication_slots
       WHERE ${slotAge} >= ${older}
       ORDER BY slot_name LIMIT 10)`;
}

/** The holders on this node older than the purge (see holdersSql). */
async function olderHolders(query: Query, next: string, horizon: Horizon): Promise<Holder[]> {
  const rows = await query<{ holder: string }>(holdersSql(horizon, "$1::bigint"), [next]);
  return rows.map((row) => row.holder);
}

/**
 * Waits up to `timeout` ms for the holders older than the purge to go; once none is left, every later snapshot sees
 * the deletes, so nothing that this check can see holds deleted rows back. The holders still there at the deadline
 * otherwise.
 */
export async function waitForOlderHolders(
  older: () => Promise<Holder[]>,
  timeout: number,
): Promise<Holder[] | undefined> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const holders = await older();
    if (holders.length === 0) return undefined;
    if (Date.now() >= deadline) return holders;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The open-snapshots step's outcome: undefined (complete) when nothing held deleted rows back. */
export function incompleteFor(holders: readonly Holder[]): string | undefined {
  if (holders.length === 0) return undefined;
  return `not complete: transactions (or replication slots) open since before the purge (${holders.join(", ")}) may still see deleted rows; purge again once they end`;
}
