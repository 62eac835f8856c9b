import { nearestOnActivePaths } from "../../search/active-paths.js";
import type { StoreVectors } from "../../search/vectors/channel.js";
import { PLAIN_VECTOR_CANDIDATES, TopK } from "../../search/vectors/score.js";
import type {
  Embedder,
  NearestRead,
  PendingText,
  VectorBackend,
  VectorFailure,
  VectorStoreOptions,
  VectorWrite,
} from "../../search/vectors/types.js";
import type { PostgresBackend } from "../backend/postgres.js";
import type { Executor, Query } from "../engines/postgres/client.js";
import type { Tables } from "../engines/postgres/tables.js";
import { sqlVectors } from "./channel.js";
import { activePathSeqs, distributeVectors, sessionIdsOf } from "./postgres-citus.js";
import { clearFailures, ensureFailureColumn, listFailures, vectorCounts } from "./postgres-failures.js";
import { pendingAfter, pendingAmong } from "./postgres-pending.js";
import { CURRENT, tableStatements, type VectorTables, vectorTables } from "./postgres-schema.js";
import { nearestPaths, nearestWhere, offPathOf } from "./postgres-scope.js";
import { linkMessages, sweepOrphans } from "./postgres-sweep.js";

/** A vector read's row: its message's seq and its cosine distance to the query. */
interface Scored {
  seq: string | number;
  distance: string | number;
}

/** Vectors of a Postgres (or PGlite) store: pgvector where `CREATE EXTENSION vector` works, else float4[] scored in SQL. */
class PostgresVectorBackend implements VectorBackend {
  kind = "postgres-array";
  private size: number | null = null;
  private iterative = false;
  private named: VectorTables | undefined;

  constructor(
    private readonly store: PostgresBackend,
    private readonly plainOnly: boolean,
  ) {}

  /** The vector tables, named on first use: a distributed store's layout is set as it opens (store.ts). */
  private get v(): VectorTables {
    this.named ??= vectorTables(this.t);
    return this.named;
  }

  private get t(): Tables {
    return this.store.tables;
  }

  private executor(): Promise<Executor> {
    return this.store.ready();
  }

  async ensure(): Promise<void> {
    const executor = await this.executor();
    for (const statement of tableStatements(this.v)) await executor.query(statement);
    if (this.v.layout.shardsNewTables) await distributeVectors(executor, this.t, this.v);
    await ensureFailureColumn(executor, this.v);
    await linkMessages(executor, this.v);
    const [state] = await executor.query<{ dimensions: number; kind: string }>(
      `SELECT dimensions, kind FROM ${this.v.state} WHERE id = 1`,
    );
    if (state) {
      this.kind = state.kind;
      this.size = Number(state.dimensions);
    } else if (!this.plainOnly && (await this.createExtension(executor))) {
      this.kind = "pgvector";
    }
    if (this.kind === "pgvector") {
      const [row] = await executor.query<{ version: string }>(
        "SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'",
      );
      const [major = 0, minor = 0] = (row?.version ?? "0").split(".").map(Number);
      this.iterative = major > 0 || minor >= 8;
    }
  }

  // A server without the pgvector package (or a role that may not create extensions) answers with an error: the
  // plain table is then the index, and the error is no failure of the store.
  private async createExtension(executor: Executor): Promise<boolean> {
    const [found] = await executor.query<{ present: boolean }>(
      "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') AS present",
    );
    if (found?.present) return true;
    try {
      await executor.query("CREATE EXTENSION IF NOT EXISTS vector");
      return true;
    } catch {
      return false;
    }
  }

  async pending(after: number, limit: number): Promise<PendingText[]> {
    return pendingAfter(await this.executor(), this.t, this.v, after, limit);
  }

  async pendingIds(sessionId: string, ids: readonly string[]): Promise<PendingText[]> {
    return pendingAmong(await this.executor(), this.t, this.v, sessionId, ids);
  }

  async write(rows: readonly VectorWrite[]): Promise<void> {
    const executor = await this.executor();
    const native = this.kind === "pgvector";
    const first = rows.find((row) => row.vector instanceof Float32Array)?.vector as Float32Array | undefined;
    if (first && this.size === null) await this.fixSize(executor, first.length);
    const column = native ? "embedding" : "vector";
    const cast = native ? "::vector" : "::float4[]";
    // In the Citus layout each statement names its row's session, so it runs on that session's shard alone.
    const sessions = this.v.layout.readsPerShard
      ? await sessionIdsOf(
          executor,
          this.t,
          rows.map((row) => Number(row.session)),
        )
      : null;
    const on = (alias: string, param: string) => (sessions ? ` AND ${alias}session_id = ${param}` : "");
    const session = (row: VectorWrite) => (sessions ? [sessions.get(Number(row.session)) ?? null] : []);
    await executor.transaction(async (query) => {
      for (const row of rows) {
        if (row.vector === "keep") {
          await query(
            `UPDATE ${this.v.vectors} SET session_num = $2, content_hash = $3, text_hash = $4 WHERE seq = $1${on("", "$5")}`,
            [row.seq, row.session, row.contentHash, row.textHash, ...session(row)],
          );
          continue;
        }
        const value = row.vector ? vectorLiteral(row.vector, native) : null;
        // Only while the message exists: one deleted since its text was read gets no vector (the reference would
        // refuse it and fail the batch). FOR KEY SHARE waits for a delete in progress, then sees the row gone.
        const key = sessions ? "session_id, seq" : "seq";
        await query(
          `INSERT INTO ${this.v.vectors} (${key}, session_num, content_hash, text_hash, ${column}, failure)
           SELECT ${sessions ? "m.session_id, " : ""}$1, $2, $3, $4, $5${cast}, $6::text FROM ${this.t.messages} m
           WHERE m.seq = $1 AND m.session_num = $2${on("m.", "$7")}
           FOR KEY SHARE
           ON CONFLICT (${key}) DO UPDATE SET session_num = EXCLUDED.session_num, content_hash = EXCLUDED.content_hash,
           text_hash = EXCLUDED.text_hash, ${column} = EXCLUDED.${column}, failure = EXCLUDED.failure`,
          [row.seq, row.session, row.contentHash, row.textHash, value, row.failure ?? null, ...session(row)],
        );
      }
    });
  }

  // The first vector fixes the store's size; with pgvector it types the column and its HNSW index.
  private async fixSize(executor: Executor, length: number): Promise<void> {
    await executor.transaction(async (query: Query) => {
      if (this.kind === "pgvector") {
        await query(`ALTER TABLE ${this.v.vectors} ADD COLUMN IF NOT EXISTS embedding vector(${length})`);
        await query(
          `CREATE INDEX IF NOT EXISTS ${this.v.hnswIndex} ON ${this.v.vectors} USING hnsw (embedding vector_cosine_ops)`,
        );
      }
      await query(
        `INSERT INTO ${this.v.state} (id, dimensions, kind) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING`,
        [length, this.kind],
      );
    });
    const [state] = await executor.query<{ dimensions: number; kind: string }>(
      `SELECT dimensions, kind FROM ${this.v.state} WHERE id = 1`,
    );
    this.size = Number(state?.dimensions ?? length);
    this.kind = state?.kind ?? this.kind;
  }

  async nearest(query: Float32Array, options: NearestRead): Promise<number[]> {
    const executor = await this.executor();
    const within = (paths: readonly number[]) => this.nearestWithin(executor, query, options, paths);
    if (!options.activePath || options.sessionId !== undefined || options.sessionIds !== undefined)
      return within(await nearestPaths(executor, this.t, options));
    return nearestOnActivePaths(options.limit, within, (seqs) => offPathOf(executor, this.t, seqs));
  }

  // The nearest vectors of the read, with the sessions `paths` kept to their active paths.
  private async nearestWithin(
    executor: Executor,
    query: Float32Array,
    options: NearestRead,
    paths: readonly number[],
  ): Promise<number[]> {
    // The sessions, role, time range and active paths are conditions of the read ($3 on), so the vectors read are
    // ones that pass.
    const onPath =
      this.v.layout.readsPerShard && paths.length > 0 ? await activePathSeqs(executor, this.t, paths) : [];
    const where = nearestWhere(this.t, options, 3, paths, onPath);
    if (where === null) return [];
    const native = this.kind === "pgvector";
    const params: unknown[] = [vectorLiteral(query, native), options.limit, ...where.params];
    if (native) {
      const sql = `SELECT v.seq, v.embedding <=> $1::vector AS distance FROM ${this.v.vectors} v
        JOIN ${this.t.messages} m ON ${this.v.joinOn}
        WHERE v.embedding IS NOT NULL${where.sql} AND ${CURRENT} ORDER BY v.embedding <=> $1::vector LIMIT $2`;
      // HNSW hands over ef_search candidates; an iterative scan (pgvector >= 0.8) keeps going while the conditions
      // drop some (up to pgvector's hnsw.max_scan_tuples, 20,000 by default).
      const rows = await executor.transaction(async (run) => {
        await run(`SET LOCAL hnsw.ef_search = ${Math.min(1000, Math.max(40, options.limit * 2))}`);
        if (this.iterative) await run("SET LOCAL hnsw.iterative_scan = relaxed_order");
        return run<Scored>(sql, params);
      });
      if (rows.length >= options.limit) return rows.map((row) => Number(row.seq));
      // Fewer came back: the scan stopped before the conditions passed enough, or the graph has no way to some
      // vectors (HNSW is approximate; many equal vectors leave others unlinked). The newest passing vectors are
      // scored exactly as well, as sqlite-vec does; a passing vector outside both is the bound (docs/RECALL.md).
      const exact = await executor.query<Scored>(
        `SELECT c.seq, c.embedding <=> $1::vector AS distance FROM (
           SELECT v.seq, v.embedding FROM ${this.v.vectors} v JOIN ${this.t.messages} m ON ${this.v.joinOn}
           WHERE v.embedding IS NOT NULL${where.sql} AND ${CURRENT} ORDER BY v.seq DESC LIMIT ${PLAIN_VECTOR_CANDIDATES}
         ) c ORDER BY 2, c.seq DESC LIMIT $2`,
        params,
      );
      const top = new TopK(options.limit);
      const seen = new Set<number>();
      for (const { seq, distance } of [...rows, ...exact]) {
        if (!seen.has(Number(seq))) top.add(Number(seq), 1 - Number(distance));
        seen.add(Number(seq));
      }
      return top.seqs();
    }
    // No index: the newest vectors of the scope, scored by a dot product in SQL (they are unit length).
    const rows = await executor.query<{ seq: string | number }>(
      `SELECT c.seq FROM (
         SELECT v.seq, v.vector FROM ${this.v.vectors} v JOIN ${this.t.messages} m ON ${this.v.joinOn}
         WHERE v.vector IS NOT NULL${where.sql} AND ${CURRENT} ORDER BY v.seq DESC LIMIT ${PLAIN_VECTOR_CANDIDATES}
       ) c
       ORDER BY (SELECT sum(a * b) FROM unnest(c.vector, $1::float4[]) AS x(a, b)) DESC, c.seq DESC LIMIT $2`,
      params,
    );
    return rows.map((row) => Number(row.seq));
  }

  async messageIds(seqs: readonly number[]): Promise<Map<number, { sessionId: string; messageId: string }>> {
    const executor = await this.executor();
    // The Citus layout's messages carry their session id (a join on the heads' number would not be co-located).
    const rows = await executor.query<{ seq: string | number; session_id: string; id: string }>(
      this.v.layout.rowsCarrySession
        ? `SELECT m.seq, m.session_id, m.id FROM ${this.t.messages} m WHERE m.seq = ANY($1::bigint[])`
        : `SELECT m.seq, h.session_id, m.id FROM ${this.t.messages} m JOIN ${this.t.heads} h ON h.num = m.session_num
       WHERE m.seq = ANY($1::bigint[])`,
      [seqs],
    );
    return new Map(rows.map((row) => [Number(row.seq), { sessionId: row.session_id, messageId: row.id }]));
  }

  async prune(sessionId?: string): Promise<void> {
    await sweepOrphans(await this.executor(), this.t, this.v, sessionId);
  }

  async counts(): Promise<{ embedded: number; pending: number; failed: number }> {
    return vectorCounts(await this.executor(), this.t, this.v);
  }

  async failures(limit: number): Promise<VectorFailure[]> {
    return listFailures(await this.executor(), this.t, this.v, limit);
  }

  async clearFailures(): Promise<void> {
    await clearFailures(await this.executor(), this.v);
  }

  async dimensions(): Promise<number | null> {
    return this.size;
  }

  async reset(): Promise<void> {
    const executor = await this.executor();
    // One statement: atomic, and the HNSW index and the reference to the messages go with the table.
    await executor.query(`DROP TABLE IF EXISTS ${this.v.vectors}, ${this.v.state}`);
    this.kind = "postgres-array";
    this.size = null;
    this.iterative = false;
  }

  async maxSeq(): Promise<number> {
    const executor = await this.executor();
    const [row] = await executor.query<{ seq: string | number }>(
      `SELECT COALESCE(MAX(seq), 0) AS seq FROM ${this.t.messages}`,
    );
    return Number(row?.seq ?? 0);
  }
}

// pgvector reads '[x,y,…]', a float4[] '{x,y,…}'; both parse the shortest round-trip form of each float.
function vectorLiteral(vector: Float32Array, native: boolean): string {
  const body = Array.from(vector, (x) => String(x)).join(",");
  return native ? `[${body}]` : `{${body}}`;
}

/** The vector channel of a PostgresStore opened with an `embedder`. */
export function postgresVectors(
  store: PostgresBackend,
  options: VectorStoreOptions & { embedder: Embedder },
): StoreVectors {
  return sqlVectors(store, options, (plainOnly) => new PostgresVectorBackend(store, plainOnly));
}
