import type { Executor } from "../../sql/engines/postgres/client.js";
import type { Tables } from "../../sql/engines/postgres/tables.js";

/**
 * Groups `sessionIds` by the shard that holds them (the heads' shards; every per-session table is co-located with
 * them), so work across sessions can send one statement per shard, each routed to its worker, instead of one per
 * session: Citus routes a statement whose every table reference names `session_id = ANY(…)` when all those
 * sessions lie on one shard (a recursive walk runs only so). One statement on the coordinator, which reads only
 * its metadata. A shard split between this and the statements would make them multi-shard, which Citus refuses for
 * a recursive walk: an error, never a wrong answer.
 */
export async function byShard(
  executor: Executor,
  t: Tables,
  sessionIds: readonly string[],
): Promise<string[][]> {
  if (sessionIds.length === 0) return [];
  const rows = await executor.query<{ session_id: string; shard: string }>(
    `SELECT s AS session_id, get_shard_id_for_distribution_column($1::regclass, s)::text AS shard
     FROM unnest($2::text[]) s`,
    [t.heads, sessionIds],
  );
  const groups = new Map<string, string[]>();
  for (const { session_id, shard } of rows) groups.set(shard, [...(groups.get(shard) ?? []), session_id]);
  return [...groups.values()];
}
