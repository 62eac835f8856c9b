/**
 * The direct proof that a Postgres purge's `VACUUM` left no deleted row behind (docs/PRIVACY.md, "Open snapshots").
 * The wait before the work (postgres-horizon.ts) sees only what the catalogs show the purge's role: another role's
 * snapshot is hidden without `pg_read_all_stats`, a standby's feedback through no slot shows as a backend of no
 * database. `VACUUM (VERBOSE)` reports, per table (and per TOAST table in plain `VACUUM`), the "recently dead" rows it
 * had to keep because something could still see them: `VACUUM FULL` as "N dead row versions cannot be removed yet",
 * `VACUUM` as "N are dead but not yet removable" (Postgres 15 on; "cannot be removed yet" before). Any N > 0 is a
 * deleted row still in the table's new files, so the step is incomplete.
 */
import type { NoticesOf, Query } from "../engines/postgres/client.js";

const KEPT = [/(\d+) dead row versions cannot be removed yet/g, /(\d+) are dead but not yet removable/g];

/** The dead rows `VACUUM (VERBOSE)` says it kept, summed over its notices; undefined when none says a count. */
export function deadRowsKept(notices: readonly string[]): number | undefined {
  let counted = false;
  let kept = 0;
  for (const notice of notices) {
    for (const pattern of KEPT) {
      for (const match of notice.matchAll(pattern)) {
        counted = true;
        kept += Number(match[1]);
      }
    }
  }
  return counted ? kept : undefined;
}

/** The step's incomplete note for `notices`, or undefined when they say no dead row was kept. */
export function deadRowsNote(notices: readonly string[]): string | undefined {
  const kept = deadRowsKept(notices);
  if (kept === 0) return undefined;
  if (kept === undefined) {
    // Read as missing, not as zero: a server whose messages are not in English (lc_messages) says the count in
    // words these patterns do not know, and a purge must not call itself complete on a proof it could not read.
    return `not verified: VACUUM VERBOSE reported no count of the dead rows it kept (${notices.length} notices): the server's messages are not in English; a superuser's \`ALTER ROLE … SET lc_messages = 'C'\` for the purge's role makes them readable`;
  }
  return `not complete: ${kept} dead row versions cannot be removed yet (a transaction, prepared transaction or replication slot older than their delete holds the horizon back); purge again once it ends`;
}

/**
 * `VACUUM (<options>) <table>`, as `VERBOSE` where the connection delivers notices (`noticesOf`), then its note on the
 * dead rows kept; where it delivers none, the plain statement, whose outcome only the wait before it vouches for.
 */
export async function vacuumProven(
  query: Query,
  noticesOf: NoticesOf | undefined,
  options: readonly string[],
  table: string,
): Promise<string | undefined> {
  if (!noticesOf) {
    await query(`VACUUM ${options.length > 0 ? `(${options.join(", ")}) ` : ""}${table}`);
    return undefined;
  }
  return deadRowsNote(await noticesOf(`VACUUM (${[...options, "VERBOSE"].join(", ")}) ${table}`));
}
