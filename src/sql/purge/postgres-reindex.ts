/**
 * The `"vacuum"` mode's `VACUUM` and index rebuild of a Postgres store's tables (docs/PRIVACY.md, "What it costs").
 * `REINDEX TABLE CONCURRENTLY` blocks no write but waits, in each of its phases, for every transaction older than
 * the phase (a wait for the older transaction's virtual xid lock) and for the table's lockers: waits for a lock, so
 * `lock_timeout` bounds each one (measured, Postgres 15). On Citus the reindex of a distributed or reference table
 * runs on every shard placement too, where the coordinator's `lock_timeout` does not reach (measured, Citus 13.2):
 * there `statement_timeout` bounds the whole statement, whose cancel cancels the workers' part. A reindex that gives
 * up leaves its new copies of the indexes (`<index>_ccnew`, after the swap the old ones as `_ccold`) invalid but
 * still written to by every insert and holding the rows they copied, so they are dropped after it, and before any
 * purge's work (a purge killed mid-reindex leaves them too): on the coordinator with `DROP INDEX CONCURRENTLY`,
 * on the placements with citus/reindex.ts.
 */
import type { PurgeRecorder } from "../../store/purge.js";
import { type Executor, type Query, sqlState } from "../engines/postgres/client.js";
import type { DeadRows } from "./postgres-dead-rows.js";
import type { Holder } from "./postgres-horizon.js";
import type { PurgeTable } from "./postgres-statistics.js";
import { DEADLOCK, LOCK_NOT_AVAILABLE, OBJECT_IN_USE, QUERY_CANCELED, step } from "./postgres-step.js";
import { vacuumStep, withSetting } from "./postgres-vacuum.js";

/** The insufficient_privilege state: a role that may not name a TOAST table's index (no USAGE on `pg_toast`). */
const INSUFFICIENT_PRIVILEGE = "42501";

/**
 * The invalid copies a cancelled concurrent reindex of the tables `r.oid = <tables>` holds for (an SQL expression:
 * one regclass, or `ANY(<array>)`) left: indexes of them or of their TOAST tables whose name ends `_ccnew` or
 * `_ccold` (and the digits Postgres adds when the name is taken) that are not valid. The store's migrations name
 * none of their indexes so, and a valid index is never one. One `copy` column (regclass).
 */
export function invalidCopiesSql(tables: string): string {
  return `SELECT i.indexrelid::regclass AS copy FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE NOT i.indisvalid AND c.relname ~ '_cc(new|old)[0-9]*$'
      AND i.indrelid IN (SELECT r.oid FROM pg_class r WHERE r.oid = ${tables}
        UNION ALL SELECT r.reltoastrelid FROM pg_class r WHERE r.oid = ${tables})`;
}

/** What the reindex and its clean-up run on a Citus cluster's shard placements (citus/reindex.ts). */
export interface ReindexPlacements {
  /** True when `table`'s reindex reaches shard placements (a Citus distributed or reference table). */
  placed(query: Query, table: string): Promise<boolean>;
  /** The invalid copies on `table`'s placements dropped, each waiting at most `timeout` ms for its lock. */
  dropPlacementCopies(query: Query, table: string, recorder: PurgeRecorder, timeout: number): Promise<void>;
  /** The same for every table of `tables` whose placements have one: one look on every worker for them all. */
  dropLeftPlacementCopies(
    query: Query,
    tables: readonly string[],
    recorder: PurgeRecorder,
    timeout: number,
  ): Promise<void>;
}

/**
 * `VACUUM` and a concurrent reindex of each table, each giving up after `timeout` ms of waiting (see the module
 * comment); a reindex that gave up is reported incomplete, naming the table and why, and its copies dropped. Once
 * one gave up, the transactions open then would hold back the next tables' reindexes too: while any of them stays
 * open (`olderThanNow`, postgres-horizon.ts), those are not run but reported, so one long transaction
 * costs the purge about `timeout` ms, not that for every table. PGlite, one connection, has no concurrent build
 * and no other transaction to wait for: a plain `REINDEX` there.
 */
export async function vacuumTables(
  query: Query,
  kind: Executor["kind"],
  dead: DeadRows,
  tables: readonly PurgeTable[],
  timeout: number,
  recorder: PurgeRecorder,
  olderThanNow: () => Promise<() => Promise<Holder[]>>,
  placements?: ReindexPlacements,
): Promise<void> {
  await query(`SET lock_timeout = ${timeout}`);
  try {
    let gaveUpOn: { table: string; older: () => Promise<Holder[]> } | undefined;
    for (const { name: table } of tables) {
      const placed = (await placements?.placed(query, table)) ?? false;
      await vacuumStep(query, dead, [], table, placed, timeout, recorder);
      // A GIN index keeps the keys of dead rows after VACUUM (and B-tree pages the bytes of removed tuples).
      if (kind === "pglite") {
        await recorder.run("REINDEX TABLE", table, () => step(() => query(`REINDEX TABLE ${table}`)));
        continue;
      }
      const still = gaveUpOn && (await gaveUpOn.older()).filter((holder) => /\bpid \d+$/.test(holder));
      if (gaveUpOn && still && still.length > 0) {
        const note = `not run: the transactions the reindex of ${gaveUpOn.table} gave up on are still open (${still.join(", ")}), and it would wait for them too`;
        recorder.runSync("REINDEX TABLE CONCURRENTLY", table, () => note);
        continue;
      }
      let gaveUp = false;
      await recorder.run("REINDEX TABLE CONCURRENTLY", table, async () => {
        const note = await reindex(query, table, placed, timeout);
        gaveUp = note !== undefined;
        return note;
      });
      if (!gaveUp) continue;
      // What is open now and older than now is older than the next reindex too: it would wait for it.
      gaveUpOn = { table, older: await olderThanNow() };
      await dropCopies(query, table, placed, timeout, recorder, placements);
    }
  } finally {
    await query("RESET lock_timeout");
  }
}

/**
 * Drops the invalid index copies a concurrent reindex of each table left (see the module comment), before a
 * purge's work in either mode: a `VACUUM FULL` would rebuild a non-unique copy into a valid duplicate index. One
 * look on this node for every table, and on Citus one on every worker.
 */
export async function dropLeftCopies(
  query: Query,
  tables: readonly PurgeTable[],
  timeout: number,
  recorder: PurgeRecorder,
  placements?: ReindexPlacements,
): Promise<void> {
  const names = tables.map((table) => table.name);
  await query(`SET lock_timeout = ${timeout}`);
  try {
    await dropOnThisNode(query, "ANY($1::regclass[])", [names], placements !== undefined, recorder);
    await placements?.dropLeftPlacementCopies(query, names, recorder, timeout);
  } finally {
    await query("RESET lock_timeout");
  }
}

/** `REINDEX TABLE CONCURRENTLY` of `table`; what it left undone when a wait outlasted `timeout` ms. */
async function reindex(query: Query, table: string, placed: boolean, timeout: number) {
  try {
    const run = () => query(`REINDEX TABLE CONCURRENTLY ${table}`);
    // On Citus the statement's own timeout too (see the module comment).
    await (placed ? withSetting(query, "statement_timeout", String(timeout), run) : run());
    return undefined;
  } catch (error) {
    const state = sqlState(error);
    const message = (error as Error).message;
    if (state === LOCK_NOT_AVAILABLE || state === DEADLOCK || state === OBJECT_IN_USE) {
      return `not complete: a transaction older than the reindex, or a lock it needs, was held past lockTimeoutMs (${timeout} ms): ${message}`;
    }
    if (placed && state === QUERY_CANCELED) {
      return `not complete: the reindex on the coordinator and the shard placements did not finish within lockTimeoutMs (${timeout} ms; a transaction older than it on a node, or a build that takes longer): ${message}`;
    }
    throw error;
  }
}

/** Drops `table`'s invalid copies on this node and on its shard placements. */
async function dropCopies(
  query: Query,
  table: string,
  placed: boolean,
  timeout: number,
  recorder: PurgeRecorder,
  placements?: ReindexPlacements,
) {
  await dropOnThisNode(query, "$1::regclass", [table], placed, recorder);
  if (placed) await placements?.dropPlacementCopies(query, table, recorder, timeout);
}

/**
 * Drops the invalid copies of the tables `r.oid = <tables>` holds for on this node with `DROP INDEX CONCURRENTLY`
 * (blocks no write), one step each. `citus`: with Citus's DDL propagation off, since Citus would send the drop of
 * a Citus table's index to its shards and refuses a TOAST table's index.
 */
async function dropOnThisNode(
  query: Query,
  tables: string,
  params: unknown[],
  citus: boolean,
  recorder: PurgeRecorder,
) {
  const copies = await query<{ copy: string }>(
    `SELECT copy::text FROM (${invalidCopiesSql(tables)}) c`,
    params,
  );
  if (copies.length === 0) return;
  const drop = async () => {
    for (const { copy } of copies)
      await recorder.run("DROP INDEX CONCURRENTLY", copy, () => dropCopy(query, copy));
  };
  await (citus ? withSetting(query, "citus.enable_ddl_propagation", "off", drop) : drop());
}

/** Drops one copy; a lock not granted in time, or a role that may not name it, is what the step leaves undone. */
async function dropCopy(query: Query, copy: string): Promise<string | undefined> {
  try {
    return await step(() => query(`DROP INDEX CONCURRENTLY IF EXISTS ${copy}`));
  } catch (error) {
    if (sqlState(error) !== INSUFFICIENT_PRIVILEGE) throw error;
    return `not dropped: ${(error as Error).message} (the invalid copy of a reindex that gave up; a role that may drop it must)`;
  }
}
