/**
 * The workers' part of a purge's "dead rows" proof on Citus (sql/purge/postgres-dead-rows.ts, docs/PRIVACY.md "Open
 * snapshots"). The coordinator's `VACUUM (VERBOSE)` of a distributed or reference table runs on every placement, and
 * Citus relays each worker's INFO notices to the coordinator's client only at or above `citus.worker_min_messages`
 * (NOTICE by default, so never) and then as DEBUG1 with the detail `from host:port` (VACUUM suppresses their own
 * level), which a client sees only under `client_min_messages` DEBUG1 (measured, Citus 13.2 on Postgres 15). So the
 * purge's VACUUMs run with both lowered, the connection's own values put back after, and the shard placements each
 * must hear from are read from the coordinator's metadata: no statement more on a worker.
 */
import type { Query } from "../../sql/engines/postgres/client.js";
import type { ShardPlacement } from "../../sql/purge/postgres-dead-rows.js";

const SETTINGS = ["client_min_messages", "citus.worker_min_messages"] as const;

/** Runs `run` with the workers' VACUUM notices relayed to this connection, then restores its settings as they were. */
export async function relayWorkerNotices<T>(query: Query, run: () => Promise<T>): Promise<T> {
  const [was] = await query<{ client: string; worker: string }>(
    "SELECT current_setting($1) AS client, current_setting($2) AS worker",
    [...SETTINGS],
  );
  await query("SELECT set_config($1, 'debug1', false), set_config($2, 'info', false)", [...SETTINGS]);
  try {
    return await run();
  } finally {
    await query("SELECT set_config($1, $2, false), set_config($3, $4, false)", [
      SETTINGS[0],
      was?.client ?? "notice",
      SETTINGS[1],
      was?.worker ?? "notice",
    ]);
  }
}

/**
 * The active placements of `table` on nodes other than this one (`host:port` and the shard's own relation name, as
 * a VACUUM VERBOSE notice names it); none for a table Citus does not place. One statement, on the coordinator.
 */
export async function shardPlacements(query: Query, table: string): Promise<ShardPlacement[]> {
  return query<ShardPlacement>(
    `SELECT n.nodename || ':' || n.nodeport AS node, name[cardinality(name)] AS shard
       FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) JOIN pg_dist_node n USING (groupid)
       CROSS JOIN LATERAL parse_ident(shard_name(s.logicalrelid, s.shardid)) AS name
      WHERE s.logicalrelid = $1::regclass AND p.shardstate = 1 AND n.isactive
        AND p.groupid <> (SELECT groupid FROM pg_dist_local_group)
      ORDER BY 1, 2`,
    [table],
  );
}
