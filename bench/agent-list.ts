/**
 * `list()` of the store-backed agent storage in a store shared with conversations: AGENT_LIST_CONVERSATIONS
 * registry rows without a source (default 10,000, as SessionManager writes them) and AGENT_LIST_AGENTS agent sessions
 * (default 10), on a SQLite file or Postgres (AGENT_SESSION_PG_URL, a schema of its own, dropped afterwards). Prints
 * one JSON line with the median and p90 of AGENT_LIST_CALLS calls (default 50) in ms. `AGENT_BENCH_SRC` points at
 * another checkout's `src` to measure an older version the same way (run the two interleaved: the machine is shared).
 * Usage: node --import tsx bench/agent-list.ts sqlite|postgres
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { BENCH_PG_URL } from "./pg-url.js";

const backend = process.argv[2] ?? "sqlite";
const conversations = Number(process.env.AGENT_LIST_CONVERSATIONS ?? "10000");
const agents = Number(process.env.AGENT_LIST_AGENTS ?? "10");
const calls = Number(process.env.AGENT_LIST_CALLS ?? "50");
const src = resolve(process.env.AGENT_BENCH_SRC ?? join(import.meta.dirname, "..", "src"));
const load = (path: string) => import(pathToFileURL(join(src, path)).href);
const agent = await load("agent/index.ts");

const dir = mkdtempSync(join(tmpdir(), "agent-list-"));
const schema = `agent_list_bench_${process.pid}`;
const pool = backend === "postgres" ? new pg.Pool({ connectionString: BENCH_PG_URL, max: 4 }) : undefined;
let store: { registry: { create(record: object): Promise<unknown> }; close(): Promise<void> };
if (pool) {
  const { PostgresStore } = await load("postgres/index.ts");
  store = await PostgresStore.open(pool, { schema });
} else {
  const { SqliteStore } = await load("sqlite/store.ts");
  store = new SqliteStore(join(dir, "bench.sqlite"));
}
const storage = new agent.StoreSessionStorage(store);

try {
  if (pool) {
    // One statement: the rows SessionManager.create writes (no source).
    await pool.query(
      `INSERT INTO ${schema}.agent_sessions (id, name, created_at, updated_at)
       SELECT 'chat-' || lpad(i::text, 6, '0'), 'chat', now(), now() FROM generate_series(1, $1) i`,
      [conversations],
    );
    await pool.query(`ANALYZE ${schema}.agent_sessions`);
  } else {
    for (let i = 0; i < conversations; i++) {
      await store.registry.create({ id: `chat-${String(i).padStart(6, "0")}`, name: "chat" });
    }
  }
  const now = Date.now();
  for (let i = 0; i < agents; i++) {
    const id = `agent-${i}`;
    await storage.save({
      id,
      messages: [],
      usage: { entries: [] },
      metadata: {},
      createdAt: now,
      updatedAt: now,
    });
  }
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    const ids: string[] = await storage.list();
    times.push(performance.now() - start);
    if (ids.length !== agents) throw new Error(`listed ${ids.length} sessions, expected ${agents}`);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) =>
    Number(times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(3));
  console.log(
    JSON.stringify({
      backend,
      src: process.env.AGENT_BENCH_SRC ? "other" : "this",
      conversations,
      agents,
      p50: at(0.5),
      p90: at(0.9),
    }),
  );
} finally {
  await store.close();
  if (pool) {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  }
  rmSync(dir, { recursive: true, force: true });
}
