// Time to erase an owner with 100 sessions (20 messages, an overlay and a cached prompt each) on SQLite and
// Postgres, beside another owner's sessions that stay (docs/PERFORMANCE.md, "Erasure"). Part of `npm run bench`
// (BENCH_ONLY=erasure; BENCH_SCALE shrinks the session count, at least 5); standalone:
// `npm run bench:script bench/erasure.ts`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import type { RegistryCapableStore } from "../src/contract/registry.js";
import { SessionManager } from "../src/manager/manager.js";
import { PostgresStore } from "../src/postgres/index.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { BENCH_PG_URL } from "./pg-url.js";
import { fmtDur, mdTable } from "./stats.js";

const MESSAGES = 20;
const text = (i: number) => `message ${i} ${"some words of an everyday message ".repeat(14)}`;

async function seed(store: RegistryCapableStore, owner: string, sessions: number): Promise<SessionManager> {
  const manager = SessionManager.create(store);
  for (let s = 0; s < sessions; s++) {
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

/** One row: `eraseOwner` of an owner with `sessions` sessions, beside another owner's as many. */
async function measure(name: string, store: RegistryCapableStore, sessions: number): Promise<string[]> {
  const manager = await seed(store, "alice", sessions);
  await seed(store, "bob", sessions);
  const t = performance.now();
  const receipt = await manager.eraseOwner("alice");
  const us = (performance.now() - t) * 1e3;
  return [
    name,
    `${receipt.sessions} sessions, ${receipt.messages} messages`,
    fmtDur(us),
    fmtDur(us / receipt.sessions),
  ];
}

/** The erasure table (a Postgres row that cannot connect says why instead). */
export async function benchErasure(scale = 1): Promise<string> {
  const sessions = Math.max(5, Math.round(100 * Math.min(1, scale)));
  const rows: string[][] = [];
  const dir = mkdtempSync(join(tmpdir(), "agent-session-erasure-bench-"));
  try {
    const sqlite = new SqliteStore(join(dir, "erase.db"), { changeLog: true });
    rows.push(await measure("SQLite (file, change log)", sqlite, sessions));
    await sqlite.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const pool = new pg.Pool({ connectionString: BENCH_PG_URL, max: 4 });
  const schema = `agent_session_erasure_bench_${process.pid}`;
  try {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    const postgres = await PostgresStore.open(pool, { schema, changeLog: true });
    rows.push(await measure("Postgres (change log)", postgres, sessions));
    await postgres.close();
  } catch (error) {
    rows.push(["Postgres", `skipped: ${error instanceof Error ? error.message : String(error)}`, "–", "–"]);
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await pool.end();
  }
  return [
    `## Erasure: erase an owner with ${sessions} sessions`,
    "",
    `\`manager.eraseOwner\` of an owner with ${sessions} sessions (${MESSAGES} messages, an overlay and a cached ` +
      `prompt each) beside another owner's ${sessions} that stay; one transaction per session.`,
    "",
    mdTable(["backend", "erased", "eraseOwner", "per session"], rows),
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await benchErasure(Number(process.env.BENCH_SCALE ?? "1")));
}
