import type { ChangeEvent } from "../../contract/feed.js";
import type { SessionMessage } from "../../contract/message.js";
import {
  type ChangeLogOptions,
  type ChangeRow,
  changeColumns,
  newOrigin,
  PRUNE_EVERY,
} from "../../store/feed/change-rows.js";
import type { LoggedChange, RemoteChanges } from "../../store/feed/remote.js";
import { readChangeRow } from "../../store/feed/rows.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { openSummary } from "../sealing/sqlite.js";
import { pageSql, pruneSql, replayRows } from "./replay.js";

// Created on first use rather than as a migration: only stores opened with `changeLog` write it, and a database
// without it pays nothing. AUTOINCREMENT: a pruned seq is never handed out again, so cursors stay unique.
const CREATE = `CREATE TABLE IF NOT EXISTS agent_changes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  origin TEXT NOT NULL,
  session_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  ids TEXT NOT NULL,
  parent_id TEXT,
  data TEXT,
  at INTEGER NOT NULL
)`;

/**
 * A session's log rows (an erasure deletes them, sql/erase/sqlite.ts): one range of this index instead of a
 * read of the whole log. Made with the table, and by migration 16 for a log made before it. One more entry per
 * logged write.
 */
const SESSION_INDEX = "CREATE INDEX IF NOT EXISTS agent_changes_session ON agent_changes(session_id)";

const FIND_LOG = "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'agent_changes'";

/** Migration 16: indexes a change log made before the index was (a store without a log has nothing to index). */
export function indexChangeLog(driver: SqlDriver): void {
  if (driver.get(FIND_LOG)) driver.run(SESSION_INDEX);
}

// The parent is read in the same statement (one indexed lookup): a writer that appended "after the latest leaf"
// does not know it, and a subscriber elsewhere needs it to place the message.
const RECORD = `INSERT INTO agent_changes (origin, session_id, kind, ids, parent_id, data, at)
  VALUES (?, ?, ?, ?, CASE WHEN ? IN ('append', 'import') THEN (
    SELECT p.id FROM agent_session_heads h JOIN agent_messages m ON m.session_num = h.num AND m.id = ?
    JOIN agent_messages p ON p.seq = m.parent_seq WHERE h.session_id = ?) END, ?, ?) RETURNING seq`;

/**
 * The SQLite change log: a table every writer with `changeLog` appends one row to after each write, pruned in
 * bounded batches; `SqliteRemoteWatch` polls it for rows of other origins (an indexed range read per tick).
 */
export class SqliteChangeLog implements RemoteChanges {
  readonly origin = newOrigin();
  private count = 0;
  private created = false;

  constructor(
    private readonly driver: SqlDriver,
    private readonly settings: Required<ChangeLogOptions>,
    private readonly read: (sessionId: string, id: string) => Promise<SessionMessage | null>,
  ) {}

  /**
   * True once the table exists. A store that only watches never creates it (opening a database to watch must not
   * write to it); the first recorded write does.
   */
  private exists(): boolean {
    if (this.created) return true;
    this.created = this.driver.get(FIND_LOG) !== undefined;
    return this.created;
  }

  record(change: LoggedChange): number {
    if (!this.created) {
      this.driver.run(CREATE);
      this.driver.run(SESSION_INDEX);
      this.created = true;
    }
    const { ids, data } = changeColumns(change);
    const first = change.ids[0] ?? null;
    const row = this.driver.get<{ seq: number }>(RECORD, [
      this.origin,
      change.sessionId,
      change.type,
      ids,
      change.type,
      first,
      change.sessionId,
      data,
      Date.now(),
    ]);
    const seq = row?.seq ?? 0;
    if (++this.count % PRUNE_EVERY === 0) this.prune(seq);
    return seq;
  }

  private prune(seq: number): void {
    this.driver.run(pruneSql("agent_changes", "?"), [seq - this.settings.retain]);
  }

  // A compaction's sealed summary (an encrypted owner's) is opened for subscribers with the store's keys.
  private readonly open = (sessionId: string, overlayId: string, sealed: string): string =>
    openSummary(this.driver, sessionId, overlayId, sealed, false);

  private page(after: number): ChangeRow[] {
    return this.driver.all<ChangeRow>(pageSql("agent_changes", "?"), [after]);
  }

  /** The newest cursor (where a watcher starts). */
  head(): number {
    if (!this.exists()) return 0;
    return this.driver.get<{ seq: number | null }>("SELECT max(seq) AS seq FROM agent_changes")?.seq ?? 0;
  }

  /**
   * Delivers other origins' rows after `position.cursor`, moving the cursor past each row before reading it (as the
   * Postgres watcher does): when a page read fails midway, the next poll resumes after the rows already delivered
   * instead of sending them again. `sessions` collects the sessions those rows were about (their writes are
   * explained: no watermark reset for them).
   */
  async deliverAfter(
    position: { cursor: number },
    deliver: (event: ChangeEvent) => void,
    sessions: Set<string>,
  ): Promise<void> {
    if (!this.exists()) return;
    for (let rows = this.page(position.cursor); rows.length > 0; rows = this.page(position.cursor)) {
      for (const row of rows) {
        position.cursor = Number(row.seq);
        if (row.origin === this.origin) continue;
        sessions.add(row.session_id);
        const event = await readChangeRow(row, "remote", this.read, this.open);
        if (event) deliver(event);
      }
    }
  }

  async *replay(after: number): AsyncIterable<ChangeEvent> {
    if (!this.exists()) return;
    const oldest = this.driver.get<{ seq: number | null }>("SELECT min(seq) AS seq FROM agent_changes")?.seq;
    yield* replayRows(oldest, after, (cursor) => this.page(cursor), this.origin, this.read, this.open);
  }
}
