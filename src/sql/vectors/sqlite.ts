import { SessionError } from "../../errors.js";
import { canBeStored } from "../../message/ids.js";
import { nearestOnActivePaths, pathsWithin } from "../../search/active-paths.js";
import type { StoreVectors } from "../../search/vectors/channel.js";
import { vectorBytes } from "../../search/vectors/embed.js";
import type {
  Embedder,
  NearestRead,
  NearestScope,
  PendingText,
  VectorBackend,
  VectorFailure,
  VectorStoreOptions,
  VectorWrite,
} from "../../search/vectors/types.js";
import type { SqliteBackend } from "../backend/sqlite.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { branchedSessions, offPathSessions } from "../search/sqlite-active-paths.js";
import { sqlVectors, vectorStatus } from "./channel.js";
import { loadSqliteVec } from "./sqlite-extension.js";
import { knnNearest, scanNearest } from "./sqlite-nearest.js";
import { pendingAfter, pendingAmong } from "./sqlite-pending.js";
import {
  addFailureColumn,
  CURRENT,
  int,
  RESET_STATEMENTS,
  VEC_GONE_TABLES,
  VEC_TABLE_PRESENT,
  VECTOR_TABLES,
} from "./sqlite-schema.js";
import { drainGone, sweepOrphans } from "./sqlite-sweep.js";

const VEC_TABLE_EXISTS = "SELECT 1 AS present FROM sqlite_master WHERE name = 'agent_message_vectors_vec'";

/** Vectors of a SQLite store: sqlite-vec where it loads, else float32 BLOBs scored in JavaScript. */
class SqliteVectorBackend implements VectorBackend {
  kind = "sqlite-blob";
  private size: number | null = null;

  constructor(
    private readonly store: SqliteBackend,
    private readonly plainOnly: boolean,
  ) {}

  private get driver(): SqlDriver {
    return this.store.driver;
  }

  async ensure(): Promise<void> {
    const driver = this.driver;
    for (const statement of VECTOR_TABLES) driver.run(statement);
    addFailureColumn(driver);
    const state = driver.get<{ dimensions: number; kind: string }>(
      "SELECT dimensions, kind FROM agent_vector_state WHERE id = 1",
    );
    if (state?.kind === "sqlite-vec") {
      if (!(await loadSqliteVec(driver))) {
        throw new SessionError(
          "UNSUPPORTED",
          "this store's vectors are in a sqlite-vec index, and this connection cannot load SQLite extensions",
        );
      }
    } else if (!state && !this.plainOnly && (await loadSqliteVec(driver))) {
      this.kind = "sqlite-vec";
    }
    if (state) {
      this.kind = state.kind;
      this.size = state.dimensions;
    }
    // A store whose sqlite-vec table predates the tombstones gets them here; what deletes left meanwhile goes now.
    if (this.kind === "sqlite-vec" && this.size !== null) {
      for (const statement of VEC_GONE_TABLES) driver.run(statement);
      this.drain();
    }
  }

  // sqlite-vec's rows of deleted vector rows go (its table exists once the first vector fixed the size).
  private drain(): void {
    if (this.kind === "sqlite-vec" && this.size !== null) drainGone(this.driver);
  }

  async pending(after: number, limit: number): Promise<PendingText[]> {
    return pendingAfter(this.driver, after, limit);
  }

  async pendingIds(sessionId: string, ids: readonly string[]): Promise<PendingText[]> {
    const num = this.store.sessionNum(sessionId, false);
    if (num === undefined || ids.length === 0) return [];
    return pendingAmong(this.driver, num, ids);
  }

  async write(rows: readonly VectorWrite[]): Promise<void> {
    const driver = this.driver;
    const native = this.kind === "sqlite-vec";
    driver.transaction(() => {
      for (const row of rows) {
        // A message deleted since its text was read gets no vector (it would outlive it): the transaction holds
        // the write lock, so no delete comes between this check and the write.
        if (
          !driver.get("SELECT 1 AS present FROM agent_messages WHERE seq = ? AND session_num = ?", [
            row.seq,
            row.session,
          ])
        )
          continue;
        const vector = row.vector;
        if (vector instanceof Float32Array) this.sizeFor(vector.length, native);
        if (vector === "keep") {
          driver.run(
            "UPDATE agent_message_vectors SET session_num = ?, content_hash = ?, text_hash = ? WHERE seq = ?",
            [row.session, row.contentHash, row.textHash, row.seq],
          );
          continue;
        }
        const blob = vector && !native ? vectorBytes(vector) : null;
        driver.run(
          `INSERT INTO agent_message_vectors (seq, session_num, content_hash, text_hash, vector, failure)
           VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (seq) DO UPDATE SET session_num = excluded.session_num, content_hash = excluded.content_hash,
           text_hash = excluded.text_hash, vector = excluded.vector, failure = excluded.failure`,
          [row.seq, row.session, row.contentHash, row.textHash, blob, row.failure ?? null],
        );
        if (!native) continue;
        // A row without a vector (no text: a tool call, an encrypted owner's message) before the first vector made
        // the sqlite-vec table (sizeFor) has nothing there to delete; the DELETE would fail the whole batch.
        if (!vector && this.size === null && !driver.get(VEC_TABLE_EXISTS)) continue;
        driver.run("DELETE FROM agent_message_vectors_vec WHERE rowid = ?", [int(row.seq)]);
        if (vector) {
          driver.run(
            "INSERT INTO agent_message_vectors_vec (rowid, embedding, session_num) VALUES (?, ?, ?)",
            [int(row.seq), vectorBytes(vector), int(row.session)],
          );
        }
      }
    });
  }

  // The first vector fixes the store's size (and creates the sqlite-vec table, whose column is typed by it).
  private sizeFor(length: number, native: boolean): void {
    if (this.size !== null) return;
    if (native) {
      this.driver.run(
        `CREATE VIRTUAL TABLE IF NOT EXISTS agent_message_vectors_vec USING vec0(
          embedding float[${length}] distance_metric=cosine, session_num integer partition key)`,
      );
      for (const statement of VEC_GONE_TABLES) this.driver.run(statement);
    }
    this.driver.run(
      "INSERT INTO agent_vector_state (id, dimensions, kind) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING",
      [length, this.kind],
    );
    // Another connection may have stored the first vector meanwhile: its size and index are the store's.
    const state = this.driver.get<{ dimensions: number; kind: string }>(
      "SELECT dimensions, kind FROM agent_vector_state WHERE id = 1",
    );
    this.size = state?.dimensions ?? length;
    this.kind = state?.kind ?? this.kind;
    if (this.size !== length) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `vectors of ${length} dimensions, the store's are ${this.size}`,
        { issues: [{ path: "embedder", rule: "conflict" }] },
      );
    }
  }

  async nearest(query: Float32Array, read: NearestRead): Promise<number[]> {
    // Vectors of messages another connection deleted would crowd sqlite-vec's KNN (a store-wide read found none).
    this.drain();
    const nums = this.scopeNums(read);
    if (nums?.length === 0) return [];
    const within = (paths: readonly number[]) => {
      const sessions = { nums, paths };
      if (this.kind === "sqlite-vec") return knnNearest(this.driver, query, read, sessions);
      return scanNearest(this.driver, query, read, sessions, "blob").seqs();
    };
    if (!read.activePath) return within([]);
    // Only sessions with other branches have messages off their paths: a linear one is read whole.
    if (nums !== undefined)
      return within(pathsWithin(branchedSessions(this.driver, undefined, { sessions: nums })));
    return nearestOnActivePaths(
      read.limit,
      async (paths) => within(paths),
      async (seqs) => offPathSessions(this.driver, seqs),
    );
  }

  async messageIds(seqs: readonly number[]): Promise<Map<number, { sessionId: string; messageId: string }>> {
    const rows = this.driver.tuples<[number, string, string]>(
      `SELECT m.seq, h.session_id, m.id FROM json_each(?) j JOIN agent_messages m ON m.seq = j.value
       JOIN agent_session_heads h ON h.num = m.session_num`,
      [JSON.stringify(seqs)],
    );
    return new Map(rows.map(([seq, sessionId, messageId]) => [seq, { sessionId, messageId }]));
  }

  // The numbers of the sessions nearest() keeps to (only those stored, and the owner's when it names one), or
  // undefined for every session (or every one of the owner's: vectors-nearest.ts keeps to them by the registry).
  private scopeNums({
    sessionId,
    sessionIds,
    owner,
  }: NearestScope & { owner: string | undefined }): number[] | undefined {
    if (sessionIds === undefined && sessionId === undefined) return undefined;
    // An id no head can have is not looked up (better-sqlite3 would match its U+FFFD form).
    const ids = (sessionIds ?? [sessionId as string]).filter(canBeStored);
    if (ids.length === 0) return [];
    if (owner !== undefined) {
      return this.driver.column<number>(
        `SELECT h.num FROM json_each(?) j JOIN agent_session_heads h ON h.session_id = j.value
         JOIN agent_sessions s ON s.id = j.value WHERE s.owner = ?`,
        [JSON.stringify(ids), owner],
      );
    }
    return this.driver.column<number>(
      "SELECT h.num FROM json_each(?) j JOIN agent_session_heads h ON h.session_id = j.value",
      [JSON.stringify(ids)],
    );
  }

  async prune(sessionId?: string): Promise<void> {
    const num = sessionId === undefined ? undefined : this.store.sessionNum(sessionId, false);
    // A deleted session's vector rows went with its messages (the trigger); what older deletes left is backfill's.
    if (sessionId === undefined || num !== undefined) sweepOrphans(this.driver, num);
    this.drain();
  }

  async counts(): Promise<{ embedded: number; pending: number; failed: number }> {
    const total = this.driver.get<{ n: number }>("SELECT COUNT(*) AS n FROM agent_messages")?.n ?? 0;
    const current = this.driver.get<{ n: number; failed: number | null }>(
      `SELECT COUNT(*) AS n, SUM(v.failure IS NOT NULL) AS failed
       FROM agent_message_vectors v JOIN agent_messages m ON m.seq = v.seq WHERE ${CURRENT}`,
    );
    return vectorStatus(total, current?.n ?? 0, current?.failed ?? 0);
  }

  async failures(limit: number): Promise<VectorFailure[]> {
    const rows = this.driver.all<VectorFailure>(
      `SELECT h.session_id AS sessionId, m.id AS messageId, v.failure AS reason
       FROM agent_message_vectors v JOIN agent_messages m ON m.seq = v.seq
       JOIN agent_session_heads h ON h.num = m.session_num
       WHERE v.failure IS NOT NULL AND ${CURRENT} ORDER BY v.seq DESC LIMIT ?`,
      [limit],
    );
    // Plain objects: node:sqlite answers rows without a prototype, which callers comparing results would trip on.
    return rows.map(({ sessionId, messageId, reason }) => ({ sessionId, messageId, reason }));
  }

  async clearFailures(): Promise<void> {
    this.driver.run("DELETE FROM agent_message_vectors WHERE failure IS NOT NULL");
  }

  async dimensions(): Promise<number | null> {
    return this.size;
  }

  async reset(): Promise<void> {
    const driver = this.driver;
    // Only a connection with the extension can drop sqlite-vec's table (and its shadow tables with it).
    if (driver.get(VEC_TABLE_PRESENT) && !(await loadSqliteVec(driver))) {
      throw new SessionError(
        "UNSUPPORTED",
        "this store's vectors are in a sqlite-vec index, and this connection cannot load SQLite extensions to drop it",
      );
    }
    driver.transaction(() => {
      for (const statement of RESET_STATEMENTS) driver.run(statement);
    });
    this.kind = "sqlite-blob";
    this.size = null;
  }

  async maxSeq(): Promise<number> {
    return (
      this.driver.get<{ seq: number }>("SELECT IFNULL(MAX(seq), 0) AS seq FROM agent_messages")?.seq ?? 0
    );
  }
}

/** The vector channel of a SqliteStore opened with an `embedder`. */
export function sqliteVectors(
  store: SqliteBackend,
  options: VectorStoreOptions & { embedder: Embedder },
): StoreVectors {
  return sqlVectors(store, options, (plainOnly) => new SqliteVectorBackend(store, plainOnly));
}
