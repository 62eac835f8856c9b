import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { MemoryStore } from "../../src/memory/store.js";
import { PostgresStore } from "../../src/postgres/store.js";
import type { VectorStoreOptions } from "../../src/search/vectors/types.js";
import type { PostgresQueryable } from "../../src/sql/engines/postgres/client.js";
import { loadBetterSqlite3 } from "../../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { citusSchema } from "../fixtures/citus-db.js";
import { newPGlite } from "../fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { sqlTagAgent } from "../helpers/sql-tag.js";

/** A store with a vector channel, as every backend's store is. */
export type VectorStore = MemoryStore | SqliteStore | PostgresStore;

/** One storage (a database, a file) on which stores are opened and closed. */
export interface Storage {
  open(options: VectorStoreOptions): Promise<VectorStore>;
  /** The message id of each seq (the channel answers seqs). */
  ids(store: VectorStore, seqs: readonly number[]): Promise<string[]>;
  /** Names of the vector tables present (none without an embedder). */
  vectorTables(store: VectorStore): Promise<string[]>;
  /** Vector rows stored (bookkeeping rows of the vector table). */
  vectorRows(store: VectorStore): Promise<number>;
  /**
   * Vectors in the index `nearest` reads: sqlite-vec's table, memory's entries, else the vector table itself (its
   * rows hold the vectors). On sqlite-vec, `store` needs the extension loaded (one opened with the embedder).
   */
  indexRows(store: VectorStore): Promise<number>;
  /** Takes away what removes a deleted message's vectors with it, as in a store whose vectors predate that. */
  unlinkVectors(store: VectorStore): Promise<void>;
  dispose(): Promise<void>;
}

/** A backend under test. */
export interface VectorTarget {
  name: string;
  /** The index the channel should pick here. */
  index: string;
  /** Why the target cannot run here (printed), or undefined. */
  skip?: string;
  /** False where a second store cannot open the first one's data (memory). */
  reopens: boolean;
  fresh(): Promise<Storage>;
}

const VECTOR_TABLES = ["agent_message_vectors", "agent_message_vectors_vec", "agent_vector_state"];

function sqliteStorage(
  source: () => ConstructorParameters<typeof SqliteStore>[0],
  cleanup: () => void,
): Storage {
  const driverOf = (store: VectorStore) => (store as SqliteStore).driver;
  return {
    open: async (options) => new SqliteStore(source(), options),
    ids: async (store, seqs) =>
      seqs.map(
        (seq) =>
          driverOf(store).get<{ id: string }>("SELECT id FROM agent_messages WHERE seq = ?", [seq])?.id ??
          "?",
      ),
    vectorTables: async (store) =>
      driverOf(store)
        .column<string>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .filter((name) => VECTOR_TABLES.includes(name)),
    vectorRows: async (store) =>
      driverOf(store).get<{ n: number }>("SELECT COUNT(*) AS n FROM agent_message_vectors")?.n ?? 0,
    indexRows: async (store) => {
      const driver = driverOf(store);
      const vec = driver.get("SELECT 1 FROM sqlite_master WHERE name = 'agent_message_vectors_vec'");
      const table = vec ? "agent_message_vectors_vec" : "agent_message_vectors";
      return driver.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`)?.n ?? 0;
    },
    unlinkVectors: async (store) => {
      const driver = driverOf(store);
      driver.run("DROP TRIGGER IF EXISTS agent_message_vectors_on_delete");
      driver.run("DROP TRIGGER IF EXISTS agent_message_vectors_tombstone");
      driver.run("DROP TABLE IF EXISTS agent_message_vectors_gone");
    },
    dispose: async () => cleanup(),
  };
}

function postgresStorage(
  db: PostgresQueryable,
  schema: string,
  cleanup: () => Promise<void>,
  distributed = false,
): Storage {
  const q = async <T>(sql: string, params: unknown[] = []) =>
    ((await db.query(sql, params)) as unknown as { rows: T[] }).rows;
  const vectorRows = async () =>
    Number(
      (await q<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".agent_message_vectors`))[0]?.n ?? 0,
    );
  return {
    open: async (options) =>
      PostgresStore.open(db, { schema, ...options, ...(distributed ? { distributed } : {}) }),
    ids: async (_store, seqs) => {
      const out: string[] = [];
      for (const seq of seqs) {
        const [row] = await q<{ id: string }>(`SELECT id FROM "${schema}".agent_messages WHERE seq = $1`, [
          seq,
        ]);
        out.push(row?.id ?? "?");
      }
      return out;
    },
    vectorTables: async () =>
      (
        await q<{ name: string }>(
          "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1",
          [schema],
        )
      )
        .map((row) => row.name)
        .filter((name) => VECTOR_TABLES.includes(name)),
    vectorRows,
    indexRows: vectorRows,
    unlinkVectors: async () => {
      const table = `"${schema}".agent_message_vectors`;
      for (const { name } of await q<{ name: string }>(
        "SELECT conname AS name FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'f'",
        [table],
      ))
        await q(`ALTER TABLE ${table} DROP CONSTRAINT "${name}"`);
    },
    dispose: cleanup,
  };
}

/** The vectors a MemoryStore's channel keeps, by seq (its backend's own map: memory has no table to count). */
export function memoryEntries(store: VectorStore): Map<number, unknown> {
  const channel = (store as MemoryStore).vectors as unknown as { backend: { entries: Map<number, unknown> } };
  return channel.backend.entries;
}

function memoryTarget(): VectorTarget {
  return {
    name: "memory",
    index: "memory",
    reopens: false,
    fresh: async () => {
      let store: MemoryStore | undefined;
      return {
        open: async (options) => {
          store = new MemoryStore(options);
          return store;
        },
        ids: async (s, seqs) => {
          const bySeq = new Map<number, string>();
          const memory = s as MemoryStore;
          for (const id of memory.sessionIds()) {
            for (const row of memory.sessionData(id, false)?.rows.values() ?? []) bySeq.set(row.seq, row.id);
          }
          return seqs.map((seq) => bySeq.get(seq) ?? "?");
        },
        vectorTables: async () => [],
        vectorRows: async () => 0,
        indexRows: async (s) => memoryEntries(s).size,
        // Memory's vectors live beside its rows in this process: no other writer deletes them.
        unlinkVectors: async () => undefined,
        dispose: async () => undefined,
      };
    },
  };
}

const cleanups: (() => Promise<void>)[] = [];

/** Closes the connections the targets share (call once, after every test). */
export async function closeTargets(): Promise<void> {
  for (const cleanup of cleanups.splice(0)) await cleanup();
}

/** Every backend with vectors: memory, SQLite (file, handle, sql tag, plain), Postgres (plain), PGlite (pgvector). */
export async function vectorTargets(): Promise<VectorTarget[]> {
  const Database = loadBetterSqlite3();
  const targets: VectorTarget[] = [memoryTarget()];
  targets.push({
    name: "sqlite file (sqlite-vec)",
    index: "sqlite-vec",
    reopens: true,
    fresh: async () => {
      const dir = mkdtempSync(join(tmpdir(), "agent-session-vectors-"));
      return sqliteStorage(
        () => join(dir, "store.db"),
        () => rmSync(dir, { recursive: true, force: true }),
      );
    },
  });
  targets.push({
    name: "sqlite :memory: handle (sqlite-vec)",
    index: "sqlite-vec",
    reopens: true,
    fresh: async () => {
      const db = new Database(":memory:");
      return sqliteStorage(
        () => db,
        () => db.close(),
      );
    },
  });
  targets.push({
    name: "sqlite file, vectorIndex plain (BLOB table)",
    index: "sqlite-blob",
    reopens: true,
    fresh: async () => {
      const dir = mkdtempSync(join(tmpdir(), "agent-session-vectors-"));
      const storage = sqliteStorage(
        () => join(dir, "store.db"),
        () => rmSync(dir, { recursive: true, force: true }),
      );
      return { ...storage, open: (options) => storage.open({ ...options, vectorIndex: "plain" }) };
    },
  });
  targets.push({
    name: "sqlite sql tag (BLOB table)",
    index: "sqlite-blob",
    reopens: true,
    fresh: async () => {
      const agent = sqlTagAgent();
      return sqliteStorage(
        () => ({ sql: agent.sql }),
        () => agent.db.close(),
      );
    },
  });
  const unavailable = await postgresUnavailable();
  const schema = `agent_session_test_vectors_${process.pid}`;
  // One pool and one PGlite for the file (a PGlite costs seconds to start); each storage is a fresh schema.
  let pool: ReturnType<typeof testPool> | undefined;
  let pglite: Promise<PGlite> | undefined;
  cleanups.push(async () => {
    if (pool) {
      await dropSchema(pool, schema);
      await pool.end();
    }
    if (pglite) await (await pglite).close();
  });
  targets.push({
    name: "postgres pg Pool (float4[] fallback: no pgvector here)",
    index: "postgres-array",
    reopens: true,
    ...(unavailable ? { skip: unavailable } : {}),
    fresh: async () => {
      pool ??= testPool(4);
      await dropSchema(pool, schema);
      return postgresStorage(pool, schema, async () => undefined);
    },
  });
  targets.push({
    name: "PGlite (pgvector)",
    index: "pgvector",
    reopens: true,
    ...(pgliteSwitchedOff() ? { skip: pgliteSwitchedOff()! } : {}),
    fresh: async () => {
      pglite ??= newPGlite({ extensions: { vector } });
      const db = await pglite;
      await dropSchema(db, "agent_session");
      return postgresStorage(db, "agent_session", async () => undefined);
    },
  });
  // One distributed schema for the file on the cluster (distributing costs seconds): each storage empties it and
  // drops the vector tables, as a fresh schema has none.
  const cluster = await citusSchema("test_vectors");
  targets.push({
    name: "postgres on a Citus cluster, distributed (float4[]: no pgvector on the workers)",
    index: "postgres-array",
    reopens: true,
    ...(cluster ? {} : { skip: "no Citus cluster (the reason is printed above)" }),
    fresh: async () => {
      if (!cluster) throw new Error("no Citus cluster");
      await cluster.reset();
      const prefix = `"${cluster.schema}".`;
      await cluster.pool.query(
        `DROP TABLE IF EXISTS ${prefix}agent_message_vectors, ${prefix}agent_vector_state`,
      );
      return postgresStorage(cluster.pool, cluster.schema, async () => undefined, true);
    },
  });
  return targets;
}
