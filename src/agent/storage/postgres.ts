import { SessionError, StorageError } from "../../errors.js";
import { buildState, fromJson, toJson } from "../codec.js";
import { assertSessionId } from "../ids.js";
import type { AgentMessage, SessionPatch, SessionState, SessionStorage, UsageEntry } from "../types.js";
import { PgConnection, type PostgresSource } from "./pg-client.js";
import { assertTablePrefix, DEFAULT_TABLE_PREFIX } from "./sql-names.js";

/** Options of {@link PostgresSessionStorage}. */
export interface PostgresSessionStorageOptions {
  /** Prefix of the three tables (default "agent_chat_"). */
  tablePrefix?: string;
}

/**
 * Sessions in PostgreSQL, laid out like the SQLite storage. Bodies are `text` holding JSON (jsonb would reject a
 * `\u0000` in a tool output). An append is one statement and so is a load, so each is a single round trip and sees
 * one consistent snapshot.
 */
export class PostgresSessionStorage implements SessionStorage {
  private readonly connecting: Promise<PgConnection>;
  private ready: Promise<PgConnection> | undefined;
  private readonly t: { sessions: string; messages: string; usage: string };

  constructor(source: PostgresSource, options: PostgresSessionStorageOptions = {}) {
    const prefix = options.tablePrefix ?? DEFAULT_TABLE_PREFIX;
    assertTablePrefix(prefix);
    this.t = { sessions: `${prefix}sessions`, messages: `${prefix}messages`, usage: `${prefix}usage` };
    this.connecting = PgConnection.open(source);
    // Reported by the first call that needs the connection, not as an unhandled rejection.
    this.connecting.catch(() => undefined);
  }

  private connection(): Promise<PgConnection> {
    this.ready ??= this.connecting.then(async (db) => {
      await this.createTables(db);
      return db;
    });
    this.ready.catch(() => {
      this.ready = undefined;
    });
    return this.ready;
  }

  private async createTables(db: PgConnection): Promise<void> {
    const statements = [
      `CREATE TABLE IF NOT EXISTS ${this.t.sessions} (id text PRIMARY KEY, parent_id text, metadata text NOT NULL,
        created_at bigint NOT NULL, updated_at bigint NOT NULL, message_count integer NOT NULL DEFAULT 0,
        usage_count integer NOT NULL DEFAULT 0)`,
      ...[this.t.messages, this.t.usage].map(
        (table) => `CREATE TABLE IF NOT EXISTS ${table} (session_id text NOT NULL, seq integer NOT NULL,
          body text NOT NULL, PRIMARY KEY (session_id, seq))`,
      ),
    ];
    for (const statement of statements) {
      try {
        await db.query(statement);
      } catch (error) {
        // Two processes creating the same table at once: the loser sees a duplicate catalog row; the table exists.
        const code = (error as { code?: unknown }).code;
        if (code !== "23505" && code !== "42P07") throw error;
      }
    }
  }

  private async run<T>(action: string, body: (db: PgConnection) => Promise<T>): Promise<T> {
    try {
      return await body(await this.connection());
    } catch (error) {
      if (error instanceof SessionError) throw error;
      throw new StorageError(
        `PostgresSessionStorage could not ${action}: ${(error as Error).message}`,
        error,
      );
    }
  }

  async save(state: SessionState): Promise<void> {
    assertSessionId(state?.id);
    const messages = (state.messages ?? []).map((message) => toJson(message));
    const entries = (state.usage?.entries ?? []).map((entry) => toJson(entry));
    const { sessions, usage } = this.t;
    await this.run(`save session ${state.id}`, (db) =>
      db.transaction(async (query) => {
        await query(`DELETE FROM ${this.t.messages} WHERE session_id = $1`, [state.id]);
        await query(`DELETE FROM ${usage} WHERE session_id = $1`, [state.id]);
        await query(
          `INSERT INTO ${sessions} (id, parent_id, metadata, created_at, updated_at, message_count, usage_count)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (id) DO UPDATE SET parent_id = EXCLUDED.parent_id, metadata = EXCLUDED.metadata,
             created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at,
             message_count = EXCLUDED.message_count, usage_count = EXCLUDED.usage_count`,
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
        for (const [table, bodies] of [
          [this.t.messages, messages],
          [usage, entries],
        ] as const) {
          if (bodies.length === 0) continue;
          await query(
            `INSERT INTO ${table} (session_id, seq, body)
             SELECT $1, t.ord - 1, t.body FROM unnest($2::text[]) WITH ORDINALITY AS t(body, ord)`,
            [state.id, bodies],
          );
        }
      }),
    );
  }

  async load(sessionId: string): Promise<SessionState | undefined> {
    assertSessionId(sessionId);
    const { sessions, messages, usage } = this.t;
    // One statement (one snapshot, one round trip) returning plain rows: the head row first, then messages and
    // ledger entries in order. Plain rows parse several times faster in pg than one huge array_agg value.
    const rows = await this.run(`load session ${sessionId}`, (db) =>
      db.query<{ part: number; body: string }>(
        `SELECT 0 AS part, 0 AS seq, json_build_array(parent_id, metadata, created_at, updated_at)::text AS body
           FROM ${sessions} WHERE id = $1
         UNION ALL SELECT 1, seq, body FROM ${messages} WHERE session_id = $1
         UNION ALL SELECT 2, seq, body FROM ${usage} WHERE session_id = $1
         ORDER BY 1, 2`,
        [sessionId],
      ),
    );
    const head = rows[0];
    if (head?.part !== 0) return undefined;
    const where = `session ${sessionId}`;
    const [parentId, metadata, createdAt, updatedAt] = fromJson<[string | null, string, number, number]>(
      head.body,
      `the head row of ${where}`,
    );
    const bodies = (part: number) => rows.filter((row) => row.part === part).map((row) => row.body);
    return buildState({
      id: sessionId,
      messages: bodies(1).map((body) => fromJson<AgentMessage>(body, `a message of ${where}`)),
      entries: bodies(2).map((body) => fromJson<UsageEntry>(body, `a usage entry of ${where}`)),
      metadata: fromJson<Record<string, unknown>>(metadata, `the metadata of ${where}`),
      createdAt: Number(createdAt),
      updatedAt: Number(updatedAt),
      parentId,
    });
  }

  async delete(sessionId: string): Promise<void> {
    assertSessionId(sessionId);
    const { sessions, messages, usage } = this.t;
    await this.run(`delete session ${sessionId}`, (db) =>
      db.query(
        `WITH m AS (DELETE FROM ${messages} WHERE session_id = $1), u AS (DELETE FROM ${usage} WHERE session_id = $1)
         DELETE FROM ${sessions} WHERE id = $1`,
        [sessionId],
      ),
    );
  }

  async list(): Promise<string[]> {
    const rows = await this.run("list sessions", (db) =>
      db.query<{ id: string }>(`SELECT id FROM ${this.t.sessions} ORDER BY created_at, id`),
    );
    return rows.map((row) => row.id);
  }

  /**
   * One statement: bump the counters (the row lock orders concurrent appends), then insert the new rows at the
   * positions the old counters name. No row of the session is read, so the cost does not grow with its length.
   */
  async appendMessages(sessionId: string, messages: AgentMessage[], patch: SessionPatch): Promise<void> {
    assertSessionId(sessionId);
    const bodies = messages.map((message) => toJson(message));
    const entries = (patch.usage ?? []).map((entry) => toJson(entry));
    const metadata = patch.metadata === undefined ? null : toJson(patch.metadata);
    const t = this.t;
    const rows = await this.run(`append to session ${sessionId}`, (db) =>
      db.query(
        `WITH s AS (
           UPDATE ${t.sessions} SET message_count = message_count + $2, usage_count = usage_count + $3,
             metadata = COALESCE($4, metadata), updated_at = $5
           WHERE id = $1 RETURNING message_count - $2 AS mbase, usage_count - $3 AS ubase
         ), m AS (
           INSERT INTO ${t.messages} (session_id, seq, body)
           SELECT $1, s.mbase + t.ord - 1, t.body FROM s, unnest($6::text[]) WITH ORDINALITY AS t(body, ord)
         ), u AS (
           INSERT INTO ${t.usage} (session_id, seq, body)
           SELECT $1, s.ubase + t.ord - 1, t.body FROM s, unnest($7::text[]) WITH ORDINALITY AS t(body, ord)
         )
         SELECT mbase FROM s`,
        [sessionId, bodies.length, entries.length, metadata, patch.updatedAt, bodies, entries],
      ),
    );
    if (rows.length === 0) throw new SessionError("NOT_FOUND", `Session not found: ${sessionId}`);
  }

  /** Ends the pool when this storage opened it from a URL or options. */
  async close(): Promise<void> {
    const db = await this.connecting.catch(() => undefined);
    await db?.close();
  }
}
