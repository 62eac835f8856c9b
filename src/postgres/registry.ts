/**
 * The session registry of SessionManager on Postgres (table `agent_sessions`, migration 2). Every write is one
 * statement, except `delete`, which is one transaction, and an `addUsage` that updated no row (one more, to tell
 * an unknown id from a refused total). Timestamps come from the server's clock (the moment the
 * statement arrived, to the millisecond), so many processes on many hosts agree on "newest activity"; `activity`
 * is a sequence value drawn by every write and breaks ties within a millisecond.
 */

import type {
  NewSessionRecord,
  SessionInfo,
  SessionListOptions,
  SessionUsage,
} from "../contract/registry.js";
import type { ErasureCondition } from "../store/erasure.js";
import { parseOwner } from "../store/owner.js";
import {
  type RegistryChange,
  type RegistryDeletion,
  type RegistryErasure,
  StoreRegistry,
} from "../store/registry-base.js";
import { type SessionInfoRow, toSessionInfo } from "../store/registry-rows.js";
import {
  assertUsageFits,
  USAGE_COUNTERS,
  type UsageTotals,
  usageBounds,
  usageDeltas,
} from "../store/usage-totals.js";
import { loggedAt } from "../store/written.js";
import type { PostgresBackend } from "./backend.js";
import type { Executor } from "./connection/client.js";
import { deleteKeyed } from "./context-records.js";
import { eraseLocked } from "./erase.js";
import { releaseSession } from "./media/attachments.js";
import { deleteStatement, NOW, nextActivity, usageAssignments, usageFits } from "./registry-sql.js";
import { statement, type Tables } from "./schema.js";
import { ownedMessagesCte } from "./search/fts.js";
import { forgetStreamSql } from "./streams.js";
import { isoSql } from "./tree.js";

type Ready = () => Promise<Executor>;

const COLUMNS = `id, name, parent_session_id, model, source, input_tokens, output_tokens, cache_read_tokens,
  cache_write_tokens, estimated_cost, end_reason, ${isoSql("created_at")} AS created_at,
  ${isoSql("updated_at")} AS updated_at, owner, pinned`;

// Citus refuses the ISO formatting (not IMMUTABLE) in RETURNING: there the outer SELECT formats the stored row.
const returningRow = (t: Tables, write: string) =>
  t.distributed
    ? `WITH r AS (${write} RETURNING *) SELECT ${COLUMNS} FROM r`
    : `${write} RETURNING ${COLUMNS}`;
const insertSql = (t: Tables) => `INSERT INTO ${t.sessions} (id, name, parent_session_id,
    model, source, owner, created_at, updated_at, activity)
  VALUES ($1, $2, $3, $4, $5, $6, ${NOW}, ${NOW}, ${nextActivity(t)})
  ON CONFLICT (id) DO NOTHING`;
const created = (t: Tables, ctes: string) =>
  t.distributed
    ? `WITH r AS (${insertSql(t)} RETURNING *)${ctes} SELECT ${COLUMNS} FROM r`
    : `WITH r AS (${insertSql(t)} RETURNING ${COLUMNS})${ctes} SELECT * FROM r`;
const createSql = statement((t) => returningRow(t, insertSql(t)));
// Owned: messages stored before the registration take the owner lexeme in the same statement (search/fts.ts).
const createOwnedSql = statement((t) => created(t, `, ${ownedMessagesCte(t, "r")}`));
const getSql = statement((t) => `SELECT ${COLUMNS} FROM ${t.sessions} WHERE id = $1`);
/**
 * @internal list(): the order of the index agent_sessions_recent exactly, so rows come out of the index without a
 * sort (exported for the plan check in the tests). `$1` NULL = no limit.
 */
export const listSql = statement(
  // Qualified: a bare `updated_at` would name the output column (the ISO text), which no index serves.
  (t) =>
    `SELECT ${COLUMNS} FROM ${t.sessions} s ORDER BY s.updated_at DESC, s.activity DESC LIMIT $1 OFFSET $2`,
);
/** @internal list({ owner }): one range of agent_sessions_owner in its order (exported for the plan check). */
export const listOwnerSql = statement(
  (t) =>
    `SELECT ${COLUMNS} FROM ${t.sessions} s WHERE s.owner = $3
      ORDER BY s.updated_at DESC, s.activity DESC LIMIT $1 OFFSET $2`,
);
// A range of the primary key per page, in its collation's order of the ids; of one source, a range of the
// index agent_sessions_source (source, id), so the sessions of other sources are never read.
const scanFirstSql = statement((t) => `SELECT ${COLUMNS} FROM ${t.sessions} ORDER BY id LIMIT $1`);
const scanAfterSql = statement(
  (t) => `SELECT ${COLUMNS} FROM ${t.sessions} WHERE id > $2 ORDER BY id LIMIT $1`,
);
/**
 * @internal scan({ source }): the first page and the next ones (exported for the plan check in the tests). Two
 * statements, not `($2 IS NULL OR id > $2)`: a generic plan could not bound the index range by that.
 */
export const scanSourceFirstSql = statement(
  (t) => `SELECT ${COLUMNS} FROM ${t.sessions} WHERE source = $2 ORDER BY id LIMIT $1`,
);
/** @internal see {@link scanSourceFirstSql}. */
export const scanSourceAfterSql = statement(
  (t) => `SELECT ${COLUMNS} FROM ${t.sessions} WHERE source = $3 AND id > $2 ORDER BY id LIMIT $1`,
);
const countSql = statement((t) => `SELECT count(*) AS n FROM ${t.sessions}`);

/** One UPDATE of `assignments` (parameters from `$2`) that also bumps `updated_at` and the activity order. */
function updateSql(assignments: string) {
  return statement((t) =>
    returningRow(
      t,
      `UPDATE ${t.sessions} SET ${assignments}${assignments ? ", " : ""}updated_at = ${NOW},
      activity = ${nextActivity(t, true)} WHERE id = $1`,
    ),
  );
}

const touchSql = updateSql("");
const renameSql = updateSql("name = $2");
const endSql = updateSql("end_reason = $2");

// $1 id, $2..$6 the deltas, $7..$16 their bounds.
const usageSql = statement((t) =>
  returningRow(
    t,
    `UPDATE ${t.sessions} SET ${usageAssignments(2)}, updated_at = ${NOW}, activity = ${nextActivity(t, true)}
    WHERE id = $1 AND ${usageFits(7)}`,
  ),
);

/** The counters of session `$1` (of source `$2` and owner `$3` when not null); `FOR UPDATE` in `lockedCountersSql`. */
export const countersSql = statement(
  (t) => `SELECT ${USAGE_COUNTERS.join(", ")} FROM ${t.sessions} WHERE id = $1
    AND ($2::text IS NULL OR source = $2::text) AND ($3::text IS NULL OR owner = $3::text)`,
);
const lockedCountersSql = statement((t) => `${countersSql(t)} FOR UPDATE`);

// Locks the session's head first (as every session write does, see writes.ts): appends wait, and the statement
// after it reads a snapshot that includes every write committed to the session before the lock was granted.
const lockHeadSql = statement((t) => `SELECT num FROM ${t.heads} WHERE session_id = $1 FOR UPDATE`);

/** The session registry of a {@link PostgresStore}. */
export class PostgresSessionRegistry extends StoreRegistry {
  /**
   * `store`: the feed and change log a delete publishes to, read at each delete (the store makes them after this);
   * omitted by the parts that only read, count or adopt (nothing they write is published).
   */
  constructor(
    private readonly ready: Ready,
    private readonly t: Tables,
    private readonly store?: Pick<PostgresBackend, "feed" | "changeLog">,
  ) {
    super(store);
    const keys = t.keys;
    // Only a store opened with a keyring has keys to forget (the method's presence says so).
    if (keys?.keyed) this.forgetKey = async (owner) => keys.forget((await ready()).query, parseOwner(owner));
  }

  /** Destroys an owner's key and the store's record of it (see SessionRegistry.forgetKey). */
  readonly forgetKey?: (owner: string) => Promise<void>;

  // `ready()` refuses with `CLOSED` once the store is closed.
  protected assertOpen(): void {}

  private async one(sql: (t: Tables) => string, params: unknown[]): Promise<SessionInfo | null> {
    const executor = await this.ready();
    const [row] = await executor.query<SessionInfoRow>(sql(this.t), params, true);
    return row ? toSessionInfo(row) : null;
  }

  protected writeCreate(record: NewSessionRecord): Promise<SessionInfo | null> {
    return this.one(record.owner ? createOwnedSql : createSql, [
      record.id,
      record.name,
      record.parentSessionId ?? null,
      record.model ?? null,
      record.source ?? null,
      record.owner ?? null,
    ]);
  }

  protected readRow(id: string): Promise<SessionInfo | null> {
    return this.one(getSql, [id]);
  }

  protected async readPage(options: SessionListOptions): Promise<SessionInfo[]> {
    const executor = await this.ready();
    const paging = [options.limit ?? null, options.offset ?? 0];
    const rows =
      options.owner === undefined
        ? await executor.query<SessionInfoRow>(listSql(this.t), paging, true)
        : await executor.query<SessionInfoRow>(listOwnerSql(this.t), [...paging, options.owner], true);
    return rows.map(toSessionInfo);
  }

  protected async *readScan(pageSize: number, source: string | undefined): AsyncGenerator<SessionInfo> {
    let after: string | null = null;
    for (;;) {
      const executor = await this.ready();
      const rows: SessionInfoRow[] =
        after === null
          ? source === undefined
            ? await executor.query<SessionInfoRow>(scanFirstSql(this.t), [pageSize], true)
            : await executor.query<SessionInfoRow>(scanSourceFirstSql(this.t), [pageSize, source], true)
          : source === undefined
            ? await executor.query<SessionInfoRow>(scanAfterSql(this.t), [pageSize, after], true)
            : await executor.query<SessionInfoRow>(
                scanSourceAfterSql(this.t),
                [pageSize, after, source],
                true,
              );
      for (const row of rows) yield toSessionInfo(row);
      const last = rows[rows.length - 1];
      if (last === undefined || rows.length < pageSize) return;
      after = last.id;
    }
  }

  protected async readCount(): Promise<number> {
    const executor = await this.ready();
    const [row] = await executor.query<{ n: string | number }>(countSql(this.t), [], true);
    return Number(row?.n ?? 0);
  }

  protected writeChange(id: string, change: RegistryChange): Promise<SessionInfo | null> {
    if (!change) return this.one(touchSql, [id]);
    return this.one(change.field === "name" ? renameSql : endSql, [id, change.value]);
  }

  protected async writeUsage(id: string, usage: Required<SessionUsage>): Promise<SessionInfo | null> {
    const params = [id, ...usageDeltas(usage), ...usageBounds(usage)];
    const info = await this.one(usageSql, params);
    if (info) return info;
    // No row took it: an unknown id or a refused total. Under the row's lock (its totals cannot change meanwhile)
    // tell which; a row that fits now (a concurrent addition moved it back) takes the addition after all.
    const executor = await this.ready();
    return executor.transaction(async (query) => {
      const [row] = await query<UsageTotals>(lockedCountersSql(this.t), [id, null, null]);
      if (!row) return null;
      assertUsageFits(id, row, usage);
      const [updated] = await query<SessionInfoRow>(usageSql(this.t), params);
      return updated ? toSessionInfo(updated) : null;
    });
  }

  /**
   * Removes the row, the session's messages, overlays and head, its recorded blocks and entries and the given
   * unrecorded blocks (context-records.ts deleteKeyed) in one transaction, which also
   * records the session's `clear` in the change log when a head or a row was there.
   */
  protected async writeDelete(id: string, keys: string[]): Promise<RegistryDeletion> {
    const executor = await this.ready();
    const log = this.store?.changeLog;
    return executor.transaction(async (query) => {
      const [head] = await query<{ num: string | number }>(lockHeadSql(this.t), [id]);
      if (head) await releaseSession(query, this.t, { num: head.num, id });
      const num = head?.num ?? null;
      const [result] = await query<{ existed: boolean }>(...deleteStatement(this.t, id, num));
      await deleteKeyed(query, this.t, id, keys);
      await query(forgetStreamSql(this.t), [id]); // a running answer's chunks go with the session
      const removed = result?.existed === true;
      if (!head && !removed) return { removed, cleared: undefined }; // nothing was there: nothing to announce
      const clear = { sessionId: id, type: "clear" as const, ids: [] };
      return { removed, cleared: loggedAt(log ? await log.recordIn(query, clear) : undefined) };
    });
  }

  protected async writeErase(
    id: string,
    keys: string[],
    condition: ErasureCondition,
  ): Promise<RegistryErasure | null> {
    return eraseLocked(await this.ready(), this.t, this.store?.changeLog, id, keys, condition);
  }

  protected async writePin(id: string, pinned: boolean): Promise<SessionInfo | null> {
    const executor = await this.ready();
    const [row] = await executor.query<SessionInfoRow>(
      returningRow(this.t, `UPDATE ${this.t.sessions} SET pinned = $2 WHERE id = $1`),
      [id, pinned],
    );
    return row ? toSessionInfo(row) : null;
  }
}
