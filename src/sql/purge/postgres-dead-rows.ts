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

/**
 * The tables a purge vacuumed and the dead rows each `VACUUM (VERBOSE)` said it kept; `noticesOf` is undefined where
 * the connection delivers no notices (the reference's `execute()` connection), and then no count is read.
 */
export class DeadRows {
  private readonly kept = new Map<string, number | undefined>();

  constructor(private readonly noticesOf: NoticesOf | undefined) {}

  /** True when the counts are read: the purge reports its "dead rows" step. */
  get reading(): boolean {
    return this.noticesOf !== undefined;
  }

  /**
   * `VACUUM (<options>) <table>`, as `VERBOSE` where notices are read, keeping the count it says; elsewhere the plain
   * statement, whose outcome only the wait before it vouches for.
   */
  async vacuum(query: Query, options: readonly string[], table: string): Promise<void> {
    if (!this.noticesOf) {
      await query(`VACUUM ${options.length > 0 ? `(${options.join(", ")}) ` : ""}${table}`);
      return;
    }
    const notices = await this.noticesOf(`VACUUM (${[...options, "VERBOSE"].join(", ")}) ${table}`);
    this.kept.set(table, deadRowsKept(notices));
  }

  /** The tables whose last VACUUM said it kept dead rows. */
  keeping(): string[] {
    return [...this.kept].filter(([, n]) => n !== undefined && n > 0).map(([table]) => table);
  }

  /** The "dead rows" step's outcome: undefined (complete) when every VACUUM said it kept none. */
  note(): string | undefined {
    const held = [...this.kept].filter(([, n]) => n !== undefined && n > 0);
    // Read as missing, not as zero: a server whose messages are not in English (lc_messages) says the count in
    // words these patterns do not know, and a purge must not call itself complete on a proof it could not read.
    const unread = [...this.kept].filter(([, n]) => n === undefined).map(([table]) => table);
    const notes: string[] = [];
    if (held.length > 0) {
      notes.push(
        `not complete: VACUUM kept dead row versions it cannot remove yet (${held.map(([t, n]) => `${t} ${n}`).join(", ")}): something older than their delete holds the horizon back (a transaction, a prepared transaction, a replication slot, a standby's feedback, vacuum_defer_cleanup_age); purge again once it moves on`,
      );
    }
    if (unread.length > 0) {
      notes.push(
        `not verified: VACUUM VERBOSE said no count of the dead rows it kept for ${unread.join(", ")} (the server's messages are not in English: a superuser's ALTER ROLE … SET lc_messages = 'C' for the purge's role makes them readable)`,
      );
    }
    return notes.length > 0 ? notes.join("; ") : undefined;
  }
}
