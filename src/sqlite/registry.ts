import { SessionError } from "../errors.js";
import {
  checkListOptions,
  checkRecord,
  checkScanOptions,
  checkUsage,
  registryText,
} from "../schema/registry.js";
import { markLogged } from "../store/feed/change-rows.js";
import { publishClear } from "../store/feed/publish.js";
import { isLookupKey, lookupKeys } from "../store/keys.js";
import { type SessionInfoRow, toSessionInfo } from "../store/registry-rows.js";
import type {
  NewSessionRecord,
  SessionInfo,
  SessionListOptions,
  SessionRegistry,
  SessionScanOptions,
  SessionUsage,
} from "../store/types.js";
import { usageBounds, usageDeltas } from "../store/usage-totals.js";
import type { SqliteBackend } from "./backend.js";
import type { SqlDriver } from "./connection/driver.js";
import { refuseUsage, USAGE_FITS, USAGE_SET } from "./usage.js";
import { deleteSessionContent } from "./writes.js";

const COLUMNS = `id, name, parent_session_id, model, source, input_tokens, output_tokens, cache_read_tokens,
  cache_write_tokens, estimated_cost, end_reason, created_at, updated_at`;

// The next write-order number; the UNIQUE index on `activity` makes MAX() one index lookup.
const NEXT_ACTIVITY = "(SELECT IFNULL(MAX(activity), 0) + 1 FROM agent_sessions)";

/** The session registry in SQLite (table `agent_sessions`); every write is one statement or one transaction. */
export class SqliteSessionRegistry implements SessionRegistry {
  /**
   * `store`: the feed and change log a delete publishes to, read at each delete (the store makes them after this);
   * omitted by the store's parts that only read or count (nothing they write is published).
   */
  constructor(
    private readonly driver: SqlDriver,
    private readonly store?: Pick<SqliteBackend, "feed" | "changeLog">,
  ) {}

  async create(input: NewSessionRecord): Promise<SessionInfo> {
    const record = checkRecord(input);
    const now = new Date().toISOString();
    const row = this.driver.get<SessionInfoRow>(
      `INSERT INTO agent_sessions (id, name, parent_session_id, model, source, created_at, updated_at, activity)
       VALUES (?, ?, ?, ?, ?, ?, ?, ${NEXT_ACTIVITY})
       ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}`,
      [
        record.id,
        record.name,
        record.parentSessionId ?? null,
        record.model ?? null,
        record.source ?? null,
        now,
        now,
      ],
    );
    if (!row) throw new SessionError("CONFLICT", `Session "${record.id}" is already registered`);
    return toSessionInfo(row);
  }

  async get(id: string): Promise<SessionInfo | null> {
    if (!isLookupKey(id)) return null;
    const row = this.driver.get<SessionInfoRow>(`SELECT ${COLUMNS} FROM agent_sessions WHERE id = ?`, [id]);
    return row ? toSessionInfo(row) : null;
  }

  async list(input?: SessionListOptions): Promise<SessionInfo[]> {
    const options = checkListOptions(input);
    // Matches the index agent_sessions_recent exactly, so rows come out of the index without a sort.
    return this.driver
      .all<SessionInfoRow>(
        `SELECT ${COLUMNS} FROM agent_sessions ORDER BY updated_at DESC, activity DESC LIMIT ? OFFSET ?`,
        [options.limit ?? -1, options.offset ?? 0],
      )
      .map(toSessionInfo);
  }

  async *scan(input?: SessionScanOptions): AsyncGenerator<SessionInfo> {
    const { pageSize, source } = checkScanOptions(input);
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

  async count(): Promise<number> {
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
    // An id no row can have is not looked up (better-sqlite3 would match its U+FFFD form).
    if (!isLookupKey(id)) return null;
    const row = this.driver.get<SessionInfoRow>(
      `UPDATE agent_sessions SET ${assignments}${assignments ? ", " : ""}updated_at = ?, activity = ${NEXT_ACTIVITY}
       WHERE id = ?${where.sql} RETURNING ${COLUMNS}`,
      [...params, new Date().toISOString(), id, ...where.params],
    );
    return row ? toSessionInfo(row) : null;
  }

  async rename(id: string, name: string): Promise<SessionInfo | null> {
    registryText(name, "A session name");
    return this.update("name = ?", [name], id);
  }

  async touch(id: string): Promise<boolean> {
    return this.update("", [], id) !== null;
  }

  async addUsage(id: string, input: SessionUsage): Promise<SessionInfo | null> {
    const usage = checkUsage(input);
    const where = { sql: ` AND ${USAGE_FITS}`, params: usageBounds(usage) };
    const add = () => this.update(USAGE_SET, usageDeltas(usage), id, where);
    const info = add();
    if (info || !isLookupKey(id)) return info;
    // No row took it: an unknown id or a refused total. Again in one transaction, so the row read is the one the
    // UPDATE saw (another process may have changed it in between).
    return this.driver.transaction(() => {
      const again = add();
      if (!again) refuseUsage(this.driver, id, usage, null);
      return again;
    });
  }

  async markEnded(id: string, reason: string): Promise<SessionInfo | null> {
    registryText(reason, "An end reason");
    return this.update("end_reason = ?", [reason], id);
  }

  /**
   * Removes the row, the session's messages, overlays and head and the given blocks in one transaction, which also
   * records the session's `clear` in the change log when a head or a row was there; published once committed.
   */
  async delete(id: string, options: { blockKeys?: readonly string[] } = {}): Promise<boolean> {
    if (!isLookupKey(id)) return false;
    const { removed, cleared } = this.driver.transaction(() => {
      const head = this.driver.get<{ num: number }>(
        "SELECT num FROM agent_session_heads WHERE session_id = ?",
        [id],
      );
      if (head) {
        deleteSessionContent(this.driver, head.num);
        this.driver.run("DELETE FROM agent_session_heads WHERE num = ?", [head.num]);
      }
      const keys = lookupKeys(options.blockKeys ?? []);
      if (keys.length > 0) {
        this.driver.run("DELETE FROM agent_context_blocks WHERE key IN (SELECT value FROM json_each(?))", [
          JSON.stringify(keys),
        ]);
      }
      const removed =
        this.driver.get("DELETE FROM agent_sessions WHERE id = ? RETURNING id", [id]) !== undefined;
      if (!head && !removed) return { removed, cleared: undefined }; // nothing was there: nothing to announce
      const log = this.store?.changeLog;
      return {
        removed,
        cleared: log ? markLogged({}, log.record({ sessionId: id, type: "clear", ids: [] })) : {},
      };
    });
    if (cleared && this.store) await publishClear(this.store.feed, id, cleared);
    return removed;
  }
}
