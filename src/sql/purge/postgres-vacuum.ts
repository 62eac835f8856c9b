/**
 * A purge's `VACUUM` or `VACUUM FULL` of one table as a step (postgres-step.ts), bounded on Citus too. The
 * coordinator's `lock_timeout` bounds its own wait for the table's lock, but Citus runs the VACUUM of a distributed
 * or reference table on every shard placement, where that setting does not reach: a worker's VACUUM FULL waited for
 * a transaction holding its shard for as long as it stayed open, and every append to that shard queued behind it;
 * a plain VACUUM waited the same (queueing no append). Measured, Citus 13.2 on Postgres 15. As for the reindex
 * (postgres-reindex.ts), the coordinator's `statement_timeout` cancels the workers' part with the statement: so a
 * placed table's VACUUM (and ANALYZE, which waits the same) runs under both, and one that did not finish in time
 * is a step left undone.
 */
import type { PurgeRecorder } from "../../store/purge.js";
import { type Query, sqlState } from "../engines/postgres/client.js";
import type { DeadRows } from "./postgres-dead-rows.js";
import { QUERY_CANCELED, step } from "./postgres-step.js";

/**
 * `VACUUM (<options>) <table>` (VERBOSE where `dead` reads the counts) as the recorder's step, bounded as
 * {@link placedStep} says. The connection's `lock_timeout` is the caller's.
 */
export async function vacuumStep(
  query: Query,
  dead: DeadRows,
  options: readonly string[],
  table: string,
  placed: boolean,
  timeout: number,
  recorder: PurgeRecorder,
): Promise<void> {
  const action = options.includes("FULL") ? "VACUUM FULL" : "VACUUM";
  await recorder.run(action, table, () =>
    placedStep(query, placed, timeout, action, () => dead.vacuum(query, options, table)),
  );
}

/**
 * Runs a purge's statement `action` as a step (postgres-step.ts); `placed` (it reaches shard placements) under
 * `statement_timeout` = `timeout` too, one cancelled by it left undone with a note naming why.
 */
export async function placedStep(
  query: Query,
  placed: boolean,
  timeout: number,
  action: string,
  run: () => Promise<unknown>,
): Promise<string | undefined> {
  if (!placed) return step(run);
  try {
    return await withSetting(query, "statement_timeout", String(timeout), () => step(run));
  } catch (error) {
    if (sqlState(error) !== QUERY_CANCELED) throw error;
    return `not complete: the ${action} on the coordinator and the shard placements did not finish within lockTimeoutMs (${timeout} ms; a lock on a shard held on a worker, or an ${action} that takes longer), cancelled on every node: ${(error as Error).message}`;
  }
}

/** Runs `run` with the setting `name` at `value` on this connection, then puts the connection's own value back. */
export async function withSetting<T>(
  query: Query,
  name: string,
  value: string,
  run: () => Promise<T>,
): Promise<T> {
  const [was] = await query<{ value: string }>("SELECT current_setting($1) AS value", [name]);
  await query("SELECT set_config($1, $2, false)", [name, value]);
  try {
    return await run();
  } finally {
    await query("SELECT set_config($1, $2, false)", [name, was?.value ?? ""]);
  }
}
