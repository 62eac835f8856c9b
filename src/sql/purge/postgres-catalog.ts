/**
 * What a Postgres purge reaches of the engine's own files, beyond the store's tables (docs/PRIVACY.md). An
 * `ANALYZE` replaces a table's rows of the catalog `pg_statistic`; the replaced rows, which sampled the erased rows'
 * values (words, names, owner ids), stay as dead tuples in its pages and its TOAST table's until it is vacuumed, on
 * every node of a cluster. `VACUUM FULL pg_statistic` writes the catalog anew: a superuser, the database's owner (it
 * is not a shared catalog) or, from Postgres 17, a holder of `MAINTAIN` on it may run it; where the role may not,
 * the step says so and the purge is incomplete. PGlite's data directory is the app's own files, copied and backed
 * up as a SQLite file is, its WAL included: there the purge also ends the WAL segment in use and removes every
 * older segment rather than recycling it (a recycled segment keeps the old records past the new ones).
 */

import type { PurgeRecorder } from "../../store/purge.js";
import type { Query } from "../engines/postgres/client.js";

/** The catalog the purge rewrites, as its steps name it. */
export const STATISTIC = "pg_catalog.pg_statistic";

/**
 * One try of the rewrite: `SKIP_LOCKED` gives up at once when the catalog is locked (another node's ANALYZE, a
 * planner reading it) instead of waiting in the lock queue, where every query planned meanwhile would wait behind it.
 */
export const VACUUM_STATISTIC = `VACUUM (FULL, SKIP_LOCKED) ${STATISTIC}`;

/** The catalog's file number: a rewrite gives it a new one, so an unchanged one means the try was skipped. */
export const STATISTIC_FILE = `SELECT pg_relation_filenode('${STATISTIC}')::text AS file`;

/**
 * True (`t`) when the current role may vacuum `pg_statistic`: a role that may not gets a warning and a skip from
 * `VACUUM`, not an error, so it is asked first. `MAINTAIN` is a privilege from Postgres 17 on; before, asking for it
 * is an error, which the CASE keeps from being evaluated.
 */
export const MAY_VACUUM_STATISTIC = `SELECT ((SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
    OR pg_has_role((SELECT datdba FROM pg_database WHERE datname = current_database()), 'USAGE')
    OR CASE WHEN current_setting('server_version_num')::int >= 170000
      THEN has_table_privilege('${STATISTIC}', 'MAINTAIN') ELSE false END)::text AS may`;

/** Why the role cannot rewrite `pg_statistic` (`where` names the node on a cluster). */
export const refusedStatistic = (where: string) =>
  `not run${where}: the role is not a superuser nor the database's owner, so the statistics an ANALYZE replaced ` +
  "stay as dead tuples of pg_statistic (sampled values of erased rows among them) until autovacuum cleans it; " +
  "run the purge as the database's owner";

/** Why a rewrite still skipped at the deadline did not run. */
export const lockedStatistic = (where: string, timeout: number) =>
  `not run${where}: pg_statistic stayed locked for ${timeout} ms (an ANALYZE or another purge); purge again`;

const pause = () => new Promise((resolve) => setTimeout(resolve, 25));

/**
 * Rewrites `pg_statistic` on the node `query` reaches, trying again until `timeout` ms have passed while it is
 * locked; the step's incomplete note when the role may not, or the lock never came.
 */
export async function vacuumStatistic(query: Query, recorder: PurgeRecorder, timeout: number): Promise<void> {
  await recorder.run("VACUUM FULL", STATISTIC, async () => {
    const [allowed] = await query<{ may: string }>(MAY_VACUUM_STATISTIC);
    if (allowed?.may !== "true") return refusedStatistic("");
    const deadline = Date.now() + timeout;
    const file = async () => (await query<{ file: string }>(STATISTIC_FILE))[0]?.file;
    for (;;) {
      const before = await file();
      await query(VACUUM_STATISTIC);
      if ((await file()) !== before) return undefined;
      if (Date.now() >= deadline) return lockedStatistic("", timeout);
      await pause();
    }
  });
}

/** A WAL segment file's name (timeline, log, segment: 24 hex digits); pg_wal's other entries are not segments. */
const SEGMENT = "^[0-9A-F]{24}$";

/**
 * PGlite only (one connection, its checkpoints run in the purge's own process, its role a superuser): moves the WAL
 * past every segment file there is, so the one in use is new (created zero-filled), then checkpoints with
 * `wal_recycle` off, which removes every older segment instead of renaming it for reuse. The segments past the one
 * in use are ones recycled earlier, holding old records: each is switched into and out of, so it is removed too.
 */
export async function replaceWal(query: Query, recorder: PurgeRecorder): Promise<void> {
  await recorder.run("replace WAL segments", "pg_wal", async () => {
    await query("SET wal_recycle = off");
    try {
      const [last] = await query<{ name: string | null }>(
        `SELECT max(name) AS name FROM pg_ls_waldir() WHERE name ~ '${SEGMENT}'`,
      );
      for (;;) {
        const [now] = await query<{ name: string }>(
          "SELECT pg_walfile_name(pg_current_wal_insert_lsn()) AS name",
        );
        if (!last?.name || !now || now.name > last.name) break;
        // A switch with no record since the segment began does nothing: a transaction id's commit writes one.
        await query("SELECT pg_current_xact_id()");
        await query("SELECT pg_switch_wal()");
      }
      // The checkpoint's redo point is in the new segment: every older one is no longer needed, and is removed.
      await query("CHECKPOINT");
    } finally {
      await query("RESET wal_recycle");
    }
    return undefined;
  });
}
