// Time to erase an owner with 100 sessions (20 messages, an overlay and a cached prompt each) on SQLite and
// Postgres, beside another owner's 100 sessions that stay (docs/PERFORMANCE.md, "Erasure").
// Run: node --import tsx bench/erasure.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { RegistryCapableStore } from "../src/contract/registry.js";
import { SessionManager } from "../src/manager/manager.js";
import { PostgresStore } from "../src/postgres/index.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { BENCH_PG_URL } from "./pg-url.js";

const SESSIONS = 100;
const MESSAGES = 20;
const text = (i: number) => `message ${i} ${"some words of an everyday message ".repeat(14)}`;

async function seed(store: RegistryCapableStore, owner: string): Promise<SessionManager> {
  const manager = SessionManager.create(store);
  for (let s = 0; s < SESSIONS; s++) {
    const { id } = await manager.create(`${owner} ${s}`, { owner });
    const messages = Array.from({ length: MESSAGES }, (_, i) => ({
      id: `${owner}-${s}-${i}`,
      role: "user",
      parts: [{ type: "text" as const, text: text(i) }],
    }));
    await manager.appendAll(id, messages);
    await manager.addCompaction(id, "a summary", messages[0]!.id, messages[1]!.id);
  }
  return manager;
}

async function measure(name: string, store: RegistryCapableStore): Promise<void> {
  const manager = await seed(store, "alice");
  await seed(store, "bob");
  const t = performance.now();
  const receipt = await manager.eraseOwner("alice");
  const ms = performance.now() - t;
  console.log(
    `| ${name} | ${receipt.sessions} sessions, ${receipt.messages} messages | ${ms.toFixed(0)} ms | ${(ms / receipt.sessions).toFixed(1)} ms |`,
  );
}

console.log("| backend | erased | eraseOwner | per session |\n| --- | --- | --- | --- |");
const dir = mkdtempSync(join(tmpdir(), "agent-session-erasure-bench-"));
try {
  const sqlite = new SqliteStore(join(dir, "erase.db"), { changeLog: true });
  await measure("SQLite (file, change log)", sqlite);
  await sqlite.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const pool = new pg.Pool({ connectionString: BENCH_PG_URL, max: 4 });
const schema = `agent_session_erasure_bench_${process.pid}`;
try {
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const postgres = await PostgresStore.open(pool, { schema, changeLog: true });
  await measure("Postgres (change log)", postgres);
  await postgres.close();
} finally {
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool.end();
}
