/**
 * The open's check of the tables' layout against the store's `distributed` option, which every open runs: tables
 * Citus distributes refuse a single-node store, whose statements Citus would fan out to every shard or reject. One
 * catalog read where Citus is not installed, two where it is; the Citus layout's own open steps (conversion,
 * placement, the routed append's function: citus/open.ts) follow for a store opened with `distributed: true`.
 */
import { SessionError } from "../../../errors.js";
import type { Executor, Query } from "./client.js";
import type { Tables } from "./tables.js";

/** Whether the citus extension is installed in this database. */
export async function hasCitus(query: Query): Promise<boolean> {
  const [row] = await query<{ citus: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus",
  );
  return row?.citus === true;
}

/** Whether the store's messages table is a Citus distributed table (false without Citus). */
export async function isDistributed(query: Query, t: Tables): Promise<boolean> {
  if (!(await hasCitus(query))) return false;
  const [row] = await query<{ distributed: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass($1)) AS distributed",
    [t.messages],
  );
  return row?.distributed === true;
}

/**
 * Whether the tables are distributed; `INVALID_ARGUMENT` when they are and the store was not opened with
 * `distributed: true`.
 */
export async function checkLayout(executor: Executor, t: Tables): Promise<boolean> {
  const distributed = await isDistributed(executor.query, t);
  if (distributed && !t.distributed) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      "These agent-session tables are distributed by Citus: open the store with distributed: true",
      { issues: [{ path: "distributed", rule: "conflict" }] },
    );
  }
  return distributed;
}
