import { SessionError } from "../../errors.js";
import {
  type AttachmentTables,
  attachmentTableStatements,
  collect,
  linkAttachments,
  loadAttachments,
  unlinkRows,
} from "../../sqlite/attachment-tables.js";
import type { SqlDriver } from "../../sqlite/driver.js";
import { openSqlite, type SqliteOptions, type SqliteSource } from "../../sqlite/open.js";
import { hydrateSync, offloadJson } from "../../store/attachments.js";
import { buildState, fromJson, toJson } from "../codec.js";
import { assertSessionId } from "../ids.js";
import type { AgentMessage, SessionPatch, SessionState, SessionStorage, UsageEntry } from "../types.js";
import { assertTablePrefix, DEFAULT_TABLE_PREFIX } from "./sql-names.js";

/** Options of {@link SQLiteSessionStorage}: the connection settings plus a table-name prefix. */
export interface SQLiteSessionStorageOptions extends SqliteOptions {
  /** Prefix of the three tables (default "agent_chat_"), so they can share a database with other data. */
  tablePrefix?: string;
}

interface SessionRow {
  id: string;
  parent_id: string | null;
  metadata: string;
  created_at: number;
  updated_at: number;
  message_count: number;
  usage_count: number;
}

/**
 * Sessions in SQLite: a session row plus messages and ledger entries keyed (session_id, seq), so an append inserts
 * only the new rows and bumps two counters in one transaction, however long the session is.
 */
export class SQLiteSessionStorage implements SessionStorage {
  private readonly db: SqlDriver;
  private readonly sessions: string;
  private readonly messages: string;
  private readonly usage: string;
  /** Media payloads of messages, each stored once however many sessions or saves hold it (attachment-tables.ts). */
  private readonly media: AttachmentTables;

  constructor(source: SqliteSource = ":memory:", options: SQLiteSessionStorageOptions = {}) {
    const prefix = options.tablePrefix ?? DEFAULT_TABLE_PREFIX;
    assertTablePrefix(prefix);
    this.sessions = `${prefix}sessions`;
    this.messages = `${prefix}messages`;
    this.usage = `${prefix}usage`;
    this.media = { attachments: `${prefix}attachments`, links: `${prefix}attachment_links` };
    this.db = openSqlite(source, options);
    this.db.transaction(() => {
      this.db.run(`CREATE TABLE IF NOT EXISTS ${this.sessions} (
        id TEXT PRIMARY KEY, parent_id TEXT, metadata TEXT NOT NULL, created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL, message_count INTEGER NOT NULL DEFAULT 0, usage_count INTEGER NOT NULL DEFAULT 0)`);
      for (const table of [this.messages, this.usage]) {
        this.db.run(`CREATE TABLE IF NOT EXISTS ${table} (
          session_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session_id, seq))`);
      }
      for (const statement of attachmentTableStatements(this.media)) this.db.run(statement);
    });
  }

  async save(state: SessionState): Promise<void> {
    assertSessionId(state?.id);
    const messages = state.messages ?? [];
    const entries = state.usage?.entries ?? [];
    this.db.transaction(() => {
      // Payloads the new state keeps are linked again before the old links' payloads are collected.
      const released = this.unlinkSession(state.id);
      this.db.run(`DELETE FROM ${this.messages} WHERE session_id = ?`, [state.id]);
      this.db.run(`DELETE FROM ${this.usage} WHERE session_id = ?`, [state.id]);
      this.db.run(
        `INSERT INTO ${this.sessions} (id, parent_id, metadata, created_at, updated_at, message_count, usage_count)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET parent_id = excluded.parent_id, metadata = excluded.metadata,
           created_at = excluded.created_at, updated_at = excluded.updated_at,
           message_count = excluded.message_count, usage_count = excluded.usage_count`,
        [
          state.id,
          state.parentId ?? null,
          toJson(state.metadata ?? {}),
          state.createdAt,
          state.updatedAt,
          messages.length,
          entries.length,
        ],
      );
      this.insertRows(this.messages, state.id, 0, messages);
      this.insertRows(this.usage, state.id, 0, entries);
      collect(this.db, released, this.media);
    });
  }

  private unlinkSession(sessionId: string): string[] {
    return unlinkRows(
      this.db,
      `SELECT rowid FROM ${this.messages} WHERE session_id = ?`,
      [sessionId],
      this.media,
    );
  }

  // Message rows keep pointers in place of inline media; the payloads are linked to the row's rowid.
  private insertRows(table: string, sessionId: string, base: number, rows: readonly unknown[]): void {
    for (let i = 0; i < rows.length; i++) {
      const json = toJson(rows[i]);
      const stored = table === this.messages ? offloadJson(json) : { content: json, attachments: [] };
      const row = this.db.get<{ rowid: number }>(
        `INSERT INTO ${table} (session_id, seq, body) VALUES (?, ?, ?) RETURNING rowid`,
        [sessionId, base + i, stored.content],
      );
      if (row && stored.attachments.length > 0)
        linkAttachments(this.db, row.rowid, stored.attachments, this.media);
    }
  }

  async load(sessionId: string): Promise<SessionState | undefined> {
    assertSessionId(sessionId);
    // One read transaction, so a concurrent append cannot show up in the rows but not in the counters.
    return this.db.transaction(() => {
      const row = this.db.get<SessionRow>(`SELECT * FROM ${this.sessions} WHERE id = ?`, [sessionId]);
      if (!row) return undefined;
      const where = `session ${sessionId}`;
      const messages = this.db
        .all<{ body: string }>(`SELECT body FROM ${this.messages} WHERE session_id = ? ORDER BY seq`, [
          sessionId,
        ])
        .map((r) => fromJson<AgentMessage>(r.body, `a message of ${where}`));
      hydrateSync(messages, (hashes) => loadAttachments(this.db, hashes, this.media));
      const entries = this.db
        .all<{ body: string }>(`SELECT body FROM ${this.usage} WHERE session_id = ? ORDER BY seq`, [
          sessionId,
        ])
        .map((r) => fromJson<UsageEntry>(r.body, `a usage entry of ${where}`));
      return buildState({
        id: row.id,
        messages,
        entries,
        metadata: fromJson<Record<string, unknown>>(row.metadata, `the metadata of ${where}`),
        createdAt: Number(row.created_at),
        updatedAt: Number(row.updated_at),
        parentId: row.parent_id,
      });
    });
  }

  async delete(sessionId: string): Promise<void> {
    assertSessionId(sessionId);
    this.db.transaction(() => {
      collect(this.db, this.unlinkSession(sessionId), this.media);
      this.db.run(`DELETE FROM ${this.messages} WHERE session_id = ?`, [sessionId]);
      this.db.run(`DELETE FROM ${this.usage} WHERE session_id = ?`, [sessionId]);
      this.db.run(`DELETE FROM ${this.sessions} WHERE id = ?`, [sessionId]);
    });
  }

  async list(): Promise<string[]> {
    return this.db
      .all<{ id: string }>(`SELECT id FROM ${this.sessions} ORDER BY created_at, id`)
      .map((r) => r.id);
  }

  async appendMessages(sessionId: string, messages: AgentMessage[], patch: SessionPatch): Promise<void> {
    assertSessionId(sessionId);
    const entries = patch.usage ?? [];
    this.db.transaction(() => {
      const row = this.db.get<Pick<SessionRow, "message_count" | "usage_count">>(
        `SELECT message_count, usage_count FROM ${this.sessions} WHERE id = ?`,
        [sessionId],
      );
      if (!row) throw new SessionError("NOT_FOUND", `Session not found: ${sessionId}`);
      this.insertRows(this.messages, sessionId, Number(row.message_count), messages);
      this.insertRows(this.usage, sessionId, Number(row.usage_count), entries);
      this.db.run(
        `UPDATE ${this.sessions} SET message_count = message_count + ?, usage_count = usage_count + ?,
           updated_at = ?, metadata = COALESCE(?, metadata) WHERE id = ?`,
        [
          messages.length,
          entries.length,
          patch.updatedAt,
          patch.metadata === undefined ? null : toJson(patch.metadata),
          sessionId,
        ],
      );
    });
  }

  /** Closes the database when this storage opened it from a path. */
  async close(): Promise<void> {
    this.db.close();
  }
}
