import type { ChangeEvent } from "../../contract/feed.js";
import type { SessionMessage } from "../../contract/message.js";
import { emitWarning } from "../../runtime/warn.js";
import {
  type ChangeLogOptions,
  type ChangeRow,
  changeColumns,
  FACTS_KIND,
  newOrigin,
  PRUNE_EVERY,
} from "../../store/feed/change-rows.js";
import type { LoggedChange, RemoteChanges, RemoteWatch, RunningWatch } from "../../store/feed/remote.js";
import { readChangeRow } from "../../store/feed/rows.js";
import type { Executor, Query } from "../engines/postgres/client.js";
import type { MessageRead } from "../engines/postgres/layout.js";
import type { Tables } from "../engines/postgres/tables.js";
import { openSummaries } from "../sealing/postgres-summaries.js";
import { logIndex, logNames, type StatementLog, voidValue } from "./postgres-append-log.js";
import { pageSql, pruneSql, replayRows } from "./replay.js";

/** Without LISTEN (PGlite, a single Client, a reference connection) the log is polled this often at most. */
const FALLBACK_POLL_MS = 1_000;

/**
 * The Postgres change log: one row per write in `agent_changes`, committed with the write (an append's statement
 * inserts it, see append-log.ts; an update's or upsert's transaction records it) or after it, announced with
 * `pg_notify` (the payload is only the cursor, far below NOTIFY's 8,000-byte limit; listeners read the rows).
 * Rows are numbered under a transaction-level advisory lock, so cursor order is commit order and a reader that
 * saw cursor n never misses a row below it that commits later. A row recorded after its write committed (deletes,
 * clears, compactions, duplicates) does not wait for the WAL flush (`synchronous_commit = off` for that statement
 * only): the write was already flushed; a crash can lose such newest rows (docs/FEED.md).
 */
export class PostgresChangeLog implements RemoteChanges, RemoteWatch {
  readonly origin = newOrigin();
  private readonly table: string;
  /** NOTIFY channel and advisory-lock key, both derived from the table so two stores' logs never mix. */
  private readonly channel: string;
  private readonly lockKey: string;
  private created: Promise<void> | undefined;
  /** True once the table is known to exist (a writer created it, or a reader found it). */
  private found = false;
  private count = 0;
  private readonly plainRead: MessageRead<SessionMessage>;

  constructor(
    private readonly ready: () => Promise<Executor>,
    private readonly tables: Tables,
    private readonly settings: Required<ChangeLogOptions>,
    read: MessageRead<SessionMessage>,
  ) {
    ({ table: this.table, channel: this.channel, lockKey: this.lockKey } = logNames(tables));
    this.plainRead = read;
  }

  /**
   * Reads a logged message back; on a cluster, reads a missing one again first (citus/settled-read.ts). Asked of
   * the layout on use: a distributed store's is set as it opens (store.ts).
   */
  private get read(): MessageRead<SessionMessage> {
    return this.tables.layout.settled(this.plainRead);
  }

  /** The connection for writing a row: the table is created here, by the first recorded write. */
  private async executor(): Promise<Executor> {
    const executor = await this.ready();
    this.created ??= (async () => {
      try {
        await executor.query(`CREATE TABLE IF NOT EXISTS ${this.table} (
          seq bigserial PRIMARY KEY, origin text NOT NULL, session_id text NOT NULL, kind text NOT NULL,
          ids text NOT NULL, parent_id text, data text, at timestamptz NOT NULL DEFAULT now())`);
      } catch (error) {
        // Two processes creating it at once: one wins with a unique violation on the catalog; the table exists.
        await executor.query(`SELECT 1 FROM ${this.table} LIMIT 0`).catch(() => {
          throw error;
        });
      }
      const index = logIndex(this.tables);
      try {
        await executor.query(index.create);
      } catch (error) {
        // The same race for its index: another process made it.
        const [made] = await executor.query<{ present: boolean }>(
          "SELECT to_regclass($1) IS NOT NULL AS present",
          [index.name],
        );
        if (!made?.present) throw error;
      }
    })().catch((error) => {
      this.created = undefined;
      throw error;
    });
    await this.created;
    this.found = true;
    return executor;
  }

  /**
   * The connection for reading, or undefined while the table does not exist: watching and replaying never create
   * it (a read-only role could not, and a store that only subscribes must write nothing). Until a writer creates
   * it there is nothing to read; its first row is then read by the next poll (from cursor 0).
   */
  private async reader(): Promise<Executor | undefined> {
    const executor = await this.ready();
    if (!this.found) {
      const [row] = await executor.query<{ name: string | null }>("SELECT to_regclass($1)::text AS name", [
        this.table,
      ]);
      this.found = row?.name !== null && row?.name !== undefined;
    }
    return this.found ? executor : undefined;
  }

  /** The log table, created if needed, for a write that logs itself in its own statement (append.ts). */
  async statementLog(): Promise<StatementLog> {
    await this.executor();
    return { table: this.table, lockKey: this.lockKey, channel: this.channel, origin: this.origin };
  }

  async record(change: LoggedChange): Promise<number> {
    const executor = await this.executor();
    // Only writes that committed already are recorded on their own: this row need not wait for the WAL flush.
    const seq = await this.insert(executor.query, change, true);
    await this.recorded(seq);
    return seq;
  }

  /**
   * Records `change` inside the caller's transaction (`query`), which commits the write and its row together;
   * call {@link recorded} once it committed.
   */
  async recordIn(query: Query, change: LoggedChange): Promise<number> {
    await this.executor();
    return this.insert(query, change, false);
  }

  private async insert(query: Query, change: LoggedChange, unflushed: boolean): Promise<number> {
    const { ids, data } = changeColumns(change);
    const t = this.tables;
    // In the Citus layout the parent's read names the session at each table, so it runs on the session's shard.
    const own = t.layout.scope("$2::text");
    const rows = await query<{ seq: string }>(
      `WITH l AS (SELECT ${voidValue(t, `pg_advisory_xact_lock(${this.lockKey}::bigint)`)}${
        unflushed ? ", set_config('synchronous_commit', 'off', true)" : ""
      }),
       i AS (INSERT INTO ${this.table} (origin, session_id, kind, ids, parent_id, data)
         SELECT $1, $2::text, $3::text, $4, CASE WHEN $3 IN ('append', 'import') THEN (
           SELECT p.id FROM ${t.heads} h JOIN ${t.messages} m ON m.session_num = h.num AND m.id = $5${own("m")}
           JOIN ${t.messages} p ON p.seq = m.parent_seq${own("p")} WHERE h.session_id = $2) END, $6 FROM l RETURNING seq)
       SELECT seq, pg_notify($7, seq::text) FROM i`,
      [this.origin, change.sessionId, change.type, ids, change.ids[0] ?? null, data, this.channel],
    );
    return Number(rows[0]?.seq ?? 0);
  }

  /** Counts a row that committed (however it was written) and prunes old rows every PRUNE_EVERY of them. */
  async recorded(seq: number): Promise<void> {
    if (++this.count % PRUNE_EVERY !== 0) return;
    const executor = await this.executor();
    await executor.query(pruneSql(this.table, "$1"), [seq - this.settings.retain]);
  }

  // A compaction's sealed summary (an encrypted owner's) is opened for subscribers with the store's keys.
  private readonly open = async (sessionId: string, id: string, summary: string): Promise<string> => {
    const executor = await this.ready();
    const [opened] = await openSummaries(executor.query, this.tables, sessionId, [{ id, summary }]);
    return opened!;
  };

  private async page(after: number): Promise<ChangeRow[]> {
    const executor = await this.reader();
    if (!executor) return [];
    return executor.query<ChangeRow>(pageSql(this.table, "$1"), [after]);
  }

  watch(deliver: (event: ChangeEvent) => void, _interest: unknown, facts: () => void): RunningWatch {
    let stopped = false;
    let cursor: number | undefined;
    let running: Promise<void> | undefined;
    let again = false;
    const poll = (): void => {
      if (running) {
        again = true;
        return;
      }
      running = (async () => {
        try {
          // start() reads the starting point before anything can call poll().
          if (cursor === undefined) return;
          for (
            let rows = await this.page(cursor);
            rows.length > 0 && !stopped;
            rows = await this.page(cursor)
          ) {
            for (const row of rows) {
              cursor = Number(row.seq);
              if (row.origin === this.origin) continue;
              // Another store stored facts (facts-log.ts): the vector worker's wake-up, no subscriber's event.
              if (row.kind === FACTS_KIND) {
                facts();
                continue;
              }
              const event = await readChangeRow(row, "remote", this.read, this.open);
              if (event && !stopped) deliver(event);
            }
          }
        } catch (error) {
          if (!stopped) {
            emitWarning(error, "AgentSessionFeedWarning");
          }
        } finally {
          running = undefined;
          if (again && !stopped) {
            again = false;
            poll();
          }
        }
      })();
    };
    let unlisten: (() => Promise<void>) | undefined;
    let timer: ReturnType<typeof setInterval> | undefined;
    let started!: () => void;
    const ready = new Promise<void>((resolve) => {
      started = resolve;
    });
    const start = async () => {
      const executor = await this.ready();
      // The starting point first, one query after subscribe(): what other processes commit while the listening
      // connection is being set up is then delivered by the first poll instead of falling before the cursor. No
      // table yet: every row a writer adds once it created it is new (cursor 0).
      const log = await this.reader();
      const [head] = log
        ? await log.query<{ seq: string | null }>(`SELECT max(seq) AS seq FROM ${this.table}`)
        : [];
      cursor ??= Number(head?.seq ?? 0);
      started();
      if (stopped) return;
      unlisten = executor.listen ? await executor.listen(this.channel, poll) : undefined;
      if (stopped) return void unlisten?.();
      poll();
      timer = setInterval(
        poll,
        unlisten ? FALLBACK_POLL_MS : Math.min(this.settings.pollMs, FALLBACK_POLL_MS),
      );
      timer.unref?.();
    };
    start()
      .catch((error: unknown) => emitWarning(error, "AgentSessionFeedWarning"))
      .finally(() => started());
    return {
      ready,
      // One cursor over the log covers every session a subscriber may name later.
      follow: () => undefined,
      stop: () => {
        stopped = true;
        if (timer) clearInterval(timer);
        void unlisten?.();
      },
    };
  }

  async *replay(after: number): AsyncIterable<ChangeEvent> {
    const executor = await this.reader();
    // No table: nothing was ever logged here.
    if (!executor) return;
    const [bounds] = await executor.query<{ oldest: string | null }>(
      `SELECT min(seq) AS oldest FROM ${this.table}`,
    );
    const oldest = bounds?.oldest === null || bounds?.oldest === undefined ? null : Number(bounds.oldest);
    yield* replayRows(oldest, after, (cursor) => this.page(cursor), this.origin, this.read, this.open);
  }
}
