/**
 * The direct proof that a Postgres purge's `VACUUM` left no deleted row behind (docs/PRIVACY.md, "Open snapshots").
 * The wait before the work (postgres-horizon.ts) sees only what the catalogs show the purge's role: another role's
 * snapshot is hidden without `pg_read_all_stats`, a standby's feedback through no slot shows as a backend of no
 * database. `VACUUM (VERBOSE)` reports, per table (and per TOAST table in plain `VACUUM`), the "recently dead" rows it
 * had to keep because something could still see them: `VACUUM FULL` as "N dead row versions cannot be removed yet",
 * `VACUUM` as "N are dead but not yet removable" (Postgres 15 on; "cannot be removed yet" before). Any N > 0 is a
 * deleted row still in the table's new files, so the step is incomplete. On Citus the workers' notices are relayed to
 * the coordinator (citus/dead-rows.ts), each naming its shard and `from host:port`: every placement must say its
 * count, and any kept row on any worker makes the step incomplete, naming the worker and the shard.
 */
import type { NoticesOf, Query } from "../engines/postgres/client.js";

const KEPT = [/(\d+) dead row versions cannot be removed yet/g, /(\d+) are dead but not yet removable/g];
/** The detail Citus gives a worker's notice it relays (citus/dead-rows.ts). */
const RELAYED = /\nfrom (\S+:\d+)$/;

/** A shard placement a Citus table's VACUUM reaches on another node: `host:port` and the shard's relation name. */
export interface ShardPlacement {
  node: string;
  shard: string;
}

/** What a purge on a Citus coordinator hands in to hear the workers' VACUUMs (citus/dead-rows.ts). */
export interface ShardNotices {
  /** Runs `run` with the workers' notices relayed to this connection. */
  relay<T>(query: Query, run: () => Promise<T>): Promise<T>;
  /** The placements of `table` on the workers, each of which must say its count. */
  placements(query: Query, table: string): Promise<ShardPlacement[]>;
}

/** One notice's count of dead rows kept: where (a worker's `host:port`, undefined on this node) and of which relation. */
interface Count {
  node: string | undefined;
  relation: string;
  kept: number;
}

/** The counts the notices say, each with the relation the notice names first and the worker that relayed it. */
function counts(notices: readonly string[]): Count[] {
  return notices.flatMap((notice) => {
    const found = KEPT.flatMap((pattern) => [...notice.matchAll(pattern)].map((m) => Number(m[1])));
    if (found.length === 0) return [];
    const node = RELAYED.exec(notice)?.[1];
    const relation = /"([^"]+)"/.exec(notice)?.[1] ?? "";
    return [{ node, relation, kept: found.reduce((a, b) => a + b, 0) }];
  });
}

/** The dead rows `VACUUM (VERBOSE)` says it kept, summed over its notices; undefined when none says a count. */
export function deadRowsKept(notices: readonly string[]): number | undefined {
  const said = counts(notices);
  return said.length > 0 ? said.reduce((sum, c) => sum + c.kept, 0) : undefined;
}

/** What one table's last VACUUM said: this node's count, the workers' counts, the placements that said none. */
interface Said {
  local: number | undefined;
  workers: Count[];
  silent: ShardPlacement[];
}

/**
 * The tables a purge vacuumed and the dead rows each `VACUUM (VERBOSE)` said it kept; `noticesOf` is undefined where
 * the connection delivers no notices (the reference's `execute()` connection), and then no count is read; `shards`,
 * on a Citus coordinator, hears the workers' counts too.
 */
export class DeadRows {
  private readonly said = new Map<string, Said>();

  constructor(
    private readonly noticesOf: NoticesOf | undefined,
    private readonly shards?: ShardNotices,
  ) {}

  /** True when the counts are read: the purge reports its "dead rows" step. */
  get reading(): boolean {
    return this.noticesOf !== undefined;
  }

  /**
   * `VACUUM (<options>) <table>`, as `VERBOSE` where notices are read, keeping the counts it says; elsewhere the plain
   * statement, whose outcome only the wait before it vouches for.
   */
  async vacuum(query: Query, options: readonly string[], table: string): Promise<void> {
    const noticesOf = this.noticesOf;
    if (!noticesOf) {
      await query(`VACUUM ${options.length > 0 ? `(${options.join(", ")}) ` : ""}${table}`);
      return;
    }
    const sql = `VACUUM (${[...options, "VERBOSE"].join(", ")}) ${table}`;
    const shards = this.shards;
    const notices = shards ? await shards.relay(query, () => noticesOf(sql)) : await noticesOf(sql);
    const said = counts(notices);
    const local = said.filter((c) => c.node === undefined);
    const workers = said.filter((c) => c.node !== undefined);
    const heard = (p: ShardPlacement) =>
      workers.some(
        (c) => c.node === p.node && (c.relation === p.shard || c.relation.endsWith(`.${p.shard}`)),
      );
    const placements = shards ? await shards.placements(query, table) : [];
    this.said.set(table, {
      local: local.length > 0 ? local.reduce((sum, c) => sum + c.kept, 0) : undefined,
      workers,
      silent: placements.filter((p) => !heard(p)),
    });
  }

  /** The tables whose last VACUUM said it kept dead rows, here or on a worker. */
  keeping(): string[] {
    return [...this.said].filter(([table, s]) => kept(table, s).length > 0).map(([table]) => table);
  }

  /** The "dead rows" step's outcome: undefined (complete) when every VACUUM, on every node, said it kept none. */
  note(): string | undefined {
    const held = [...this.said].flatMap(([table, s]) => kept(table, s));
    // Read as missing, not as zero: a server whose messages are not in English (lc_messages) says the count in
    // words these patterns do not know, and a purge must not call itself complete on a proof it could not read.
    const unread = [...this.said].filter(([, s]) => s.local === undefined).map(([table]) => table);
    const silent = [...this.said.values()].flatMap((s) => s.silent.map((p) => `${p.shard} on ${p.node}`));
    const notes: string[] = [];
    if (held.length > 0) {
      notes.push(
        `not complete: VACUUM kept dead row versions it cannot remove yet (${held.join(", ")}): something older than their delete holds the horizon back (a transaction, a prepared transaction, a replication slot, a standby's feedback, vacuum_defer_cleanup_age); purge again once it moves on`,
      );
    }
    if (unread.length > 0) {
      notes.push(
        `not verified: VACUUM VERBOSE said no count of the dead rows it kept for ${unread.join(", ")} (the server's messages are not in English: a superuser's ALTER ROLE … SET lc_messages = 'C' for the purge's role makes them readable)`,
      );
    }
    if (silent.length > 0) {
      notes.push(
        `not verified: no count of the dead rows kept reached the coordinator from ${silent.join(", ")} (a worker's messages not in English, or notices Citus did not relay)`,
      );
    }
    return notes.length > 0 ? notes.join("; ") : undefined;
  }
}

/** A table's kept counts: `table n` on this node, `shard n on host:port` on a worker. */
function kept(table: string, s: Said): string[] {
  return [
    ...(s.local !== undefined && s.local > 0 ? [`${table} ${s.local}`] : []),
    ...s.workers.filter((c) => c.kept > 0).map((c) => `${c.relation} ${c.kept} on ${c.node}`),
  ];
}
