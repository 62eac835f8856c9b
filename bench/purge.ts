// Time of store.purge() after an owner's erasure (docs/PRIVACY.md, "What it costs"): two owners with 100 sessions
// each (20 messages of ~500 bytes, an overlay and a dropped streamed answer of 50 chunks each), statistics sampled
// with ANALYZE, one owner erased, then a purge and a second purge that finds nothing new. SQLite (file), PGlite (a
// data directory) and Postgres; the last column is the first purge's time on the engine's own files (the rewrite of
// pg_statistic, PGlite's WAL segments replaced: src/postgres/purge-catalog.ts), a part of its total.
// `BENCH_SCALE` shrinks the session count (at least 5). Standalone: `npm run bench:script bench/purge.ts`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import type { RegistryCapableStore } from "../src/contract/registry.js";
import { hasStreamStore } from "../src/contract/streams.js";
import { SessionManager } from "../src/manager/manager.js";
import { PostgresStore } from "../src/postgres/index.js";
import { SqliteStore } from "../src/sqlite/store.js";
import type { PurgeReport } from "../src/store/purge.js";
import { BENCH_PG_URL } from "./pg-url.js";
import { mdTable } from "./stats.js";

const text = (i: number) => `message ${i} ${"some words of an everyday message ".repeat(14)}`;

async function seed(store: RegistryCapableStore, owner: string, sessions: number): Promise<SessionManager> {
  const manager = SessionManager.create(store);
  for (let s = 0; s < sessions; s++) {
    const { id } = await manager.create(`${owner} ${s}`, { owner });
    const messages = Array.from({ length: 20 }, (_, i) => ({
      id: `${owner}-${s}-${i}`,
      role: "user",
      parts: [{ type: "text" as const, text: text(i) }],
    }));
    await manager.appendAll(id, messages);
    await manager.addCompaction(id, "a summary", messages[0]!.id, messages[1]!.id);
    if (hasStreamStore(store)) {
      await store.streams.start(id, `answer-${s}`, Date.now());
      const chunks = Array.from({ length: 50 }, (_, seq) => ({ seq, chunk: `data: ${text(seq)}` }));
      await store.streams.append(id, `answer-${s}`, chunks, Date.now());
      await store.streams.end(id, `answer-${s}`, null, Date.now());
      await store.streams.drop(id, `answer-${s}`);
    }
  }
  return manager;
}

const ms = (report: PurgeReport) => `${Math.round(report.ms)} ms${report.complete ? "" : " (incomplete)"}`;

/** The report's time on the engine's own files: the steps on pg_statistic and on the WAL. */
const engine = (report: PurgeReport) =>
  `${Math.round(
    report.steps
      .filter((s) => s.target === "pg_catalog.pg_statistic" || s.target === "pg_wal")
      .reduce((sum, s) => sum + s.ms, 0),
  )} ms`;

/** ANALYZE of every table of `schema` (autovacuum's own, run now). */
async function analyzeSchema(
  db: { query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }> },
  schema: string,
) {
  const { rows } = await db.query(
    "SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = $1",
    [schema],
  );
  for (const { name } of rows as { name: string }[]) await db.query(`ANALYZE ${name}`);
}

async function measure(
  name: string,
  store: RegistryCapableStore & { purge(): Promise<PurgeReport> },
  analyze: () => Promise<void>,
  sessions: number,
): Promise<string[]> {
  const manager = await seed(store, "alice", sessions);
  await seed(store, "bob", sessions);
  await analyze();
  await manager.eraseOwner("alice");
  const first = await store.purge();
  const second = await store.purge();
  return [
    name,
    `${sessions} of ${2 * sessions} sessions`,
    ms(first),
    ms(second),
    String(first.steps.length),
    engine(first),
  ];
}

const sessions = Math.max(5, Math.round(100 * Math.min(1, Number(process.env.BENCH_SCALE ?? 1))));
const rows: string[][] = [];
const dir = mkdtempSync(join(tmpdir(), "agent-session-purge-bench-"));
try {
  const sqlite = new SqliteStore(join(dir, "purge.db"));
  rows.push(
    await measure("SQLite (file, ANALYZE run)", sqlite, async () => sqlite.driver.run("ANALYZE"), sessions),
  );
  await sqlite.close();
  const db = await PGlite.create({ dataDir: join(dir, "pglite") });
  const pglite = await PostgresStore.open(db, { schema: "bench" });
  rows.push(await measure("PGlite (data directory)", pglite, () => analyzeSchema(db, "bench"), sessions));
  await pglite.close();
  await db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const pool = new pg.Pool({ connectionString: BENCH_PG_URL, max: 2 });
const schema = `agent_session_purge_bench_${process.pid}`;
try {
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const store = await PostgresStore.open(pool, { schema });
  rows.push(await measure("Postgres (local server)", store, () => analyzeSchema(pool, schema), sessions));
  await store.close();
} catch (error) {
  rows.push(["Postgres", `not run: ${(error as Error).message}`, "", "", "", ""]);
} finally {
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
  await pool.end();
}
console.log(
  mdTable(
    ["backend", "erased", "purge after erasure", "second purge", "steps", "of which engine files"],
    rows,
  ),
);
