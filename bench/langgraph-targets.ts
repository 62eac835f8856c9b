/**
 * The four checkpointers bench/langgraph.ts compares: `AgentSessionSaver` on a SQLite file and on Postgres, and
 * LangGraph's own `SqliteSaver` and `PostgresSaver` on the same engines. Each keeps one thread in a place of its own
 * (a file, a schema of the bench's database), so its size is the thread's: the size now minus the size before the
 * thread's first step (the empty schema).
 */
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import pg from "pg";
import { AgentSessionSaver } from "../src/langgraph/index.js";
import { PostgresStore } from "../src/postgres/index.js";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { BENCH_PG_URL } from "./pg-url.js";

/** One checkpointer holding one thread, with what the bench needs to measure it. */
export interface LangGraphTarget {
  name: string;
  engine: "SQLite" | "Postgres";
  saver: BaseCheckpointSaver;
  /** Bytes on disk of the saver's tables now (SQLite: file + WAL after a checkpoint; Postgres: total relation sizes). */
  size(): Promise<number>;
  close(): Promise<void>;
}

const OUR_TABLES = ["agent_checkpoints", "agent_checkpoint_values", "agent_checkpoint_writes"];
const THEIR_TABLES = ["checkpoints", "checkpoint_blobs", "checkpoint_writes"];

/** The SQLite file's bytes, WAL included, after a TRUNCATE checkpoint (run through a connection of its own). */
export function sqliteSize(file: string): number {
  const db = new (loadBetterSqlite3())(file);
  try {
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  const wal = (() => {
    try {
      return statSync(`${file}-wal`).size;
    } catch {
      return 0; // no WAL file: nothing to add
    }
  })();
  return statSync(file).size + wal;
}

/** Our saver and SqliteSaver, each on a file of its own under `dir`. */
export async function sqliteTargets(dir: string): Promise<LangGraphTarget[]> {
  const ours = join(dir, "agent-session.db");
  const theirs = join(dir, "sqlite-saver.db");
  const store = new SqliteStore(ours);
  const saver = SqliteSaver.fromConnString(theirs);
  return [
    {
      name: "agent-session",
      engine: "SQLite",
      saver: new AgentSessionSaver(store),
      size: async () => sqliteSize(ours),
      close: async () => {
        await store.close();
        rmSync(ours, { force: true });
      },
    },
    {
      name: "SqliteSaver",
      engine: "SQLite",
      saver,
      size: async () => sqliteSize(theirs),
      close: async () => {
        saver.db.close();
        rmSync(theirs, { force: true });
      },
    },
  ];
}

/**
 * Our saver and PostgresSaver in a database of their own (`lg_bench_<pid>`, schemas `ours` and `theirs`), dropped
 * by the returned `drop`. Throws when the server cannot be reached.
 */
export async function postgresTargets(): Promise<{ targets: LangGraphTarget[]; drop(): Promise<void> }> {
  const database = `lg_bench_${process.pid}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: BENCH_PG_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${database}`);
  const at = new URL(BENCH_PG_URL);
  at.pathname = `/${database}`;
  const pool = new pg.Pool({ connectionString: at.href, max: 4 });
  const sizes = new pg.Pool({ connectionString: at.href, max: 1 });
  const size = (schema: string, tables: string[]) => async () => {
    const { rows } = await sizes.query<{ bytes: string }>(
      `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = ANY($2)`,
      [schema, tables],
    );
    return Number(rows[0]?.bytes ?? 0);
  };
  const store = await PostgresStore.open(pool, { schema: "ours" });
  const theirs = PostgresSaver.fromConnString(at.href, { schema: "theirs" });
  await theirs.setup();
  const targets: LangGraphTarget[] = [
    {
      name: "agent-session",
      engine: "Postgres",
      saver: new AgentSessionSaver(store),
      size: size("ours", OUR_TABLES),
      close: () => store.close(),
    },
    {
      name: "PostgresSaver",
      engine: "Postgres",
      saver: theirs,
      size: size("theirs", THEIR_TABLES),
      close: () => theirs.end(),
    },
  ];
  const drop = async () => {
    await pool.end();
    await sizes.end();
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  };
  return { targets, drop };
}
