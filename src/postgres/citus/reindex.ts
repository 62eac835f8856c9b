/**
 * The `"vacuum"`-mode purge's clean-up on a Citus cluster's shard placements (sql/purge/postgres-reindex.ts,
 * docs/PRIVACY.md "What it costs"). The coordinator's `REINDEX TABLE CONCURRENTLY` of a distributed or reference
 * table runs on every placement; when its timeout cancels it, each placement keeps the invalid copies it had built
 * (`<index>_<shard>_ccnew`, its TOAST table's too; measured, Citus 13.2). One command a placement lists them, and
 * one drops them: a plain `DROP INDEX` in a `DO` block, since a command there runs in one statement where no
 * `lock_timeout` could be set before a `DROP INDEX CONCURRENTLY`; so it waits at most the purge's timeout for the
 * shard's lock (writes to that shard wait behind it for as long), with Citus's DDL propagation off, as a worker's
 * Citus refuses to drop a TOAST table's index otherwise.
 */
import type { Query } from "../../sql/engines/postgres/client.js";
import { invalidCopiesSql } from "../../sql/purge/postgres-reindex.js";
import type { PurgeRecorder } from "../../store/purge.js";
import { failed, type NodeResult, nodeOf, sharded } from "./purge.js";

/** A command on every active worker. */
const ON_WORKERS = "SELECT nodename, nodeport, success, result FROM run_command_on_workers($1)";

/** A command on every placement of a table: its shard's name is the command's one format argument (`%1$s`). */
const ON_PLACEMENTS =
  "SELECT nodename, nodeport, success, result FROM run_command_on_placements($1::regclass, $2)";

/** The shard's copies (invalidCopiesSql) as a JSON array of their names. */
const LIST = `SELECT coalesce(json_agg(c.copy::text ORDER BY c.copy::text), '[]')::text
  FROM (${invalidCopiesSql("'%1$s'::regclass")}) c`;

/** True when `table`'s reindex reaches shard placements: a Citus table (distributed or reference). */
export function placed(query: Query, table: string): Promise<boolean> {
  return sharded(query, table);
}

/**
 * Drops the invalid copies of `table`'s indexes on every placement, each placement's waiting at most `timeout` ms
 * for the shard's lock; one step when any placement has one, incomplete with the placements that could not.
 */
export async function dropPlacementCopies(
  query: Query,
  table: string,
  recorder: PurgeRecorder,
  timeout: number,
): Promise<void> {
  const listed = await query<NodeResult>(ON_PLACEMENTS, [table, LIST]);
  const unread = failed(listed);
  const copies = listed
    .filter((r) => r.success)
    .flatMap((r) => (JSON.parse(r.result) as string[]).map((copy) => `${copy} on ${nodeOf(r)}`));
  if (unread === undefined && copies.length === 0) return;
  await recorder.run("DROP INDEX on placements", table, async () => {
    if (unread) return `not listed on every placement: ${unread}`;
    // `%%s`: run_command_on_placements formats the command with the shard's name first.
    const drop = `DO $purge$ DECLARE copy regclass; BEGIN
      PERFORM set_config('lock_timeout', '${timeout}', true), set_config('citus.enable_ddl_propagation', 'off', true);
      FOR copy IN ${invalidCopiesSql("'%1$s'::regclass")} LOOP EXECUTE format('DROP INDEX %%s', copy); END LOOP;
    END $purge$`;
    const error = failed(await query<NodeResult>(ON_PLACEMENTS, [table, drop]));
    return error === undefined
      ? undefined
      : `not dropped on every placement (of ${copies.join(", ")}): ${error}`;
  });
}

/**
 * Drops the invalid copies on the placements of every table of `tables` that has one (`dropPlacementCopies`): the
 * shards' names read from the coordinator's metadata, then one command on every worker names the shards with a
 * copy, so a purge with nothing left over asks each worker once.
 */
export async function dropLeftPlacementCopies(
  query: Query,
  tables: readonly string[],
  recorder: PurgeRecorder,
  timeout: number,
): Promise<void> {
  const shards = await query<{ i: number; shard: string }>(
    `SELECT array_position($1::regclass[], s.logicalrelid) AS i, shard_name(s.logicalrelid, s.shardid) AS shard
       FROM pg_dist_shard s WHERE s.logicalrelid = ANY($1::regclass[])`,
    [tables],
  );
  if (shards.length === 0) return;
  const names = shards.map((s) => `'${s.shard.replaceAll("'", "''")}'`).join(", ");
  const rows = await query<NodeResult>(ON_WORKERS, [
    `SELECT coalesce(json_agg(x.shard), '[]')::text FROM unnest(ARRAY[${names}]::text[]) AS x(shard)
      WHERE to_regclass(x.shard) IS NOT NULL AND EXISTS (${invalidCopiesSql("to_regclass(x.shard)")})`,
  ]);
  const error = failed(rows);
  if (error) {
    recorder.runSync("DROP INDEX on placements", undefined, () => `not listed on every worker: ${error}`);
    return;
  }
  const found = new Set(rows.flatMap((r) => JSON.parse(r.result) as string[]));
  const left = new Set(shards.filter((s) => found.has(s.shard)).map((s) => tables[s.i - 1] as string));
  for (const table of left) await dropPlacementCopies(query, table, recorder, timeout);
}
