import type {
  NewSessionRecord,
  SessionInfo,
  SessionListOptions,
  SessionUsage,
} from "../contract/registry.js";
import { type ErasureCondition, meetsCondition } from "../store/erasure.js";
import { parseOwner } from "../store/owner.js";
import {
  type RegistryChange,
  type RegistryDeletion,
  type RegistryErasure,
  StoreRegistry,
} from "../store/registry-base.js";
import { type SessionInfoRow, toSessionInfo } from "../store/registry-rows.js";
import { usageBounds, usageDeltas } from "../store/usage-totals.js";
import { cursorOf, loggedAt } from "../store/written.js";
import type { SqliteBackend } from "./backend.js";
import type { SqlDriver } from "./connection/driver.js";
import { deleteKeyed } from "./context-records.js";
import { eraseSession } from "./erase.js";
import { retokenizeOwned } from "./search/retokenize.js";
import { forgetStream } from "./streams.js";
import { refuseUsage, USAGE_FITS, USAGE_SET } from "./usage.js";
import { deleteSessionContent } from "./writes.js";

const COLUMNS = `id, name, parent_session_id, model, source, input_tokens, output_tokens, cache_read_tokens,
  cache_write_tokens, estimated_cost, end_reason, created_at, updated_at, owner, pinned`;

// The next write-order number; the UNIQUE index on `activity` makes MAX() one index lookup.
export const NEXT_ACTIVITY = "(SELECT IFNULL(MAX(activity), 0) + 1 FROM agent_sessions)";

/** The session registry in SQLite (table `agent_sessions`); every write is one statement or one transaction. */
export class SqliteSessionRegistry extends StoreRegistry {
  /**
   * `store`: the feed and change log a delete publishes to, read at each delete (the store makes them after this);
   * omitted by the store's parts that only read or count (nothing they write is published).
   */
  constructor(
    private readonly driver: SqlDriver,
    private readonly store?: Pick<SqliteBackend, "feed" | "changeLog">,
  ) {
    super(store);
    const keys = driver.keys;
    // Only a store opened with a keyring has keys to forget (the method's presence says so).
    if (keys?.keyed) this.forgetKey = (owner) => keys.forget(parseOwner(owner));
  }

  /** Destroys an owner's key and the store's record of it (see SessionRegistry.forgetKey). */
  readonly forgetKey?: (owner: string) => Promise<void>;

  // The driver refuses every statement with `CLOSED` once the store is closed.
  protected assertOpen(): void {}

  protected async writeCreate(record: NewSessionRecord): Promise<SessionInfo | null> {
    // With an owner, the messages the session may hold already take its token in the same transaction.
    if (record.owner === undefined || record.owner === null) return this.insert(record);
    return this.driver.transaction(() => {
      const info = this.insert(record);
      if (info) retokenizeOwned(this.driver, record.id);
      return info;
    });
  }

  private insert(record: NewSessionRecord): SessionInfo | null {
    const now = new Date().toISOString();
    const row = this.driver.get<SessionInfoRow>(
      `INSERT INTO agent_sessions (id, name, parent_session_id, model, source, owner, created_at, updated_at,
         activity)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ${NEXT_ACTIVITY})
       ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}`,
      [
        record.id,
        record.name,
        record.parentSessionId ?? null,
        record.model ?? null,
        record.source ?? null,
        record.owner ?? null,
        now,
        now,
      ],
    );
    return row ? toSessionInfo(row) : null;
  }

  protected async readRow(id: string): Promise<SessionInfo | null> {
    const row = this.driver.get<SessionInfoRow>(`SELECT ${COLUMNS} FROM agent_sessions WHERE id = ?`, [id]);
    return row ? toSessionInfo(row) : null;
  }

  protected async readPage(options: SessionListOptions): Promise<SessionInfo[]> {
    if (options.owner !== undefined) {
      // One range of agent_sessions_owner, in its order: other owners' rows are never read.
      return this.driver
        .all<SessionInfoRow>(
          `SELECT ${COLUMNS} FROM agent_sessions WHERE owner = ?
           ORDER BY updated_at DESC, activity DESC LIMIT ? OFFSET ?`,
          [options.owner, options.limit ?? -1, options.offset ?? 0],
        )
        .map(toSessionInfo);
    }
    // Matches the index agent_sessions_recent exactly, so rows come out of the index without a sort.
    return this.driver
      .all<SessionInfoRow>(
        `SELECT ${COLUMNS} FROM agent_sessions ORDER BY updated_at DESC, activity DESC LIMIT ? OFFSET ?`,
        [options.limit ?? -1, options.offset ?? 0],
      )
      .map(toSessionInfo);
  }

  protected async *readScan(pageSize: number, source: string | undefined): AsyncGenerator<SessionInfo> {
    // A range of the UNIQUE index on id per page, in SQLite's byte order of the ids; with a source, a range of
    // agent_sessions_source (source, id), so the sessions of other sources are never read.
    const of: string[] = source === undefined ? [] : [source];
    const first = source === undefined ? "" : " WHERE source = ?";
    const next = source === undefined ? "WHERE id > ?" : "WHERE source = ? AND id > ?";
    let after: string | null = null;
    for (;;) {
      const rows: SessionInfoRow[] =
        after === null
          ? this.driver.all(`SELECT ${COLUMNS} FROM agent_sessions${first} ORDER BY id LIMIT ?`, [
              ...of,
              pageSize,
            ])
          : this.driver.all(`SELECT ${COLUMNS} FROM agent_sessions ${next} ORDER BY id LIMIT ?`, [
              ...of,
              after,
              pageSize,
            ]);
      for (const row of rows) yield toSessionInfo(row);
      const last = rows[rows.length - 1];
      if (last === undefined || rows.length < pageSize) return;
      after = last.id;
    }
  }

  protected async readCount(): Promise<number> {
    return Number(this.driver.get<{ n: number }>("SELECT COUNT(*) AS n FROM agent_sessions")?.n ?? 0);
  }

  /**
   * Runs one UPDATE that also bumps `updated_at` and the activity order; null when the id is unknown (or `where`,
   * more conditions with their parameters, excludes the row).
   */
  private update(
    assignments: string,
    params: (string | number)[],
    id: string,
    where: { sql: string; params: number[] } = { sql: "", params: [] },
  ): SessionInfo | null {
    const row = this.driver.get<SessionInfoRow>(
      `UPDATE agent_sessions SET ${assignments}${assignments ? ", " : ""}updated_at = ?, activity = ${NEXT_ACTIVITY}
       WHERE id = ?${where.sql} RETURNING ${COLUMNS}`,
      [...params, new Date().toISOString(), id, ...where.params],
    );
    return row ? toSessionInfo(row) : null;
  }

  protected async writeChange(id: string, change: RegistryChange): Promise<SessionInfo | null> {
    return change ? this.update(`${change.field} = ?`, [change.value], id) : this.update("", [], id);
  }

  protected async writeUsage(id: string, usage: Required<SessionUsage>): Promise<SessionInfo | null> {
    const where = { sql: ` AND ${USAGE_FITS}`, params: usageBounds(usage) };
    const add = () => this.update(USAGE_SET, usageDeltas(usage), id, where);
    const info = add();
    if (info) return info;
    // No row took it: an unknown id or a refused total. Again in one transaction, so the row read is the one the
    // UPDATE saw (another process may have changed it in between).
    return this.driver.transaction(() => {
      const again = add();
      if (!again) refuseUsage(this.driver, id, usage);
      return again;
    });
  }

  /**
   * Removes the row, the session's messages, overlays and head, its recorded blocks and entries and the given
   * unrecorded blocks (context-records.ts deleteKeyed) in one transaction, which also
   * records the session's `clear` in the change log when a head or a row was there.
   */
  protected async writeDelete(id: string, keys: string[]): Promise<RegistryDeletion> {
    return this.driver.transaction(() => {
      const head = this.driver.get<{ num: number }>(
        "SELECT num FROM agent_session_heads WHERE session_id = ?",
        [id],
      );
      if (head) {
        deleteSessionContent(this.driver, head.num);
        this.driver.run("DELETE FROM agent_session_heads WHERE num = ?", [head.num]);
      }
      forgetStream(this.driver, id); // a running answer's chunks go with the session
      deleteKeyed(this.driver, id, keys);
      const removed =
        this.driver.get("DELETE FROM agent_sessions WHERE id = ? RETURNING id", [id]) !== undefined;
      if (!head && !removed) return { removed, cleared: undefined }; // nothing was there: nothing to announce
      const log = this.store?.changeLog;
      return {
        removed,
        cleared: loggedAt(log?.record({ sessionId: id, type: "clear", ids: [] })),
      };
    });
  }

  // One write transaction per session: the condition is read under the write lock, so two sweepers never both
  // erase a session (the second finds nothing), and a reader sees the whole session or none of it.
  protected async writeErase(
    id: string,
    keys: string[],
    condition: ErasureCondition,
  ): Promise<RegistryErasure | null> {
    return this.driver.transaction(() => {
      const row = this.driver.get<SessionInfoRow>(`SELECT ${COLUMNS} FROM agent_sessions WHERE id = ?`, [id]);
      if (!meetsCondition(row && toSessionInfo(row), condition)) return null;
      const head = this.driver.get<{ num: number }>(
        "SELECT num FROM agent_session_heads WHERE session_id = ?",
        [id],
      );
      if (!row && !head) return null;
      const counts = eraseSession(this.driver, id, head === undefined ? undefined : Number(head.num), keys);
      const log = this.store?.changeLog;
      const logged = cursorOf(log?.record({ sessionId: id, type: "erased", ids: [] }));
      return { counts, logged };
    });
  }

  protected async writePin(id: string, pinned: boolean): Promise<SessionInfo | null> {
    const row = this.driver.get<SessionInfoRow>(
      `UPDATE agent_sessions SET pinned = ? WHERE id = ? RETURNING ${COLUMNS}`,
      [pinned ? 1 : 0, id],
    );
    return row ? toSessionInfo(row) : null;
  }
}
