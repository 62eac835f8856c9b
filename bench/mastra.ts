/**
 * Mastra's memory storages side by side, in one run (docs/PERFORMANCE.md, "Mastra memory storages"): our
 * `AgentSessionMemoryStorage` on a SQLite file and on Postgres, beside Mastra's `@mastra/libsql` (a SQLite file) and
 * `@mastra/pg`. Each keeps one thread in a place of its own (a file, a schema of the bench's database). Measured:
 * saving MASTRA_BENCH_MESSAGES messages (~290 bytes of text each) two at a time, as an agent turn saves them (the
 * saves interleaved across the storages, so load hits all alike); listing the last 40 (the `lastMessages` read of
 * every turn) MASTRA_BENCH_READS times; the bytes on disk per message (the whole file with its WAL checkpointed,
 * measured by a process of its own (bench/sqlite-pages.ts), or every relation of the schema, after the messages and
 * once the storages are closed, minus before them). No semantic recall row: Mastra's needs an embedder and a vector
 * store, and ours searches without one (docs/MASTRA.md).
 * Env: MASTRA_BENCH_MESSAGES (default 1000), MASTRA_BENCH_READS (default 50), MASTRA_BENCH_ENGINES (sqlite,postgres),
 * MASTRA_BENCH_TENTHS=1 (also print each storage's save p50 in every tenth of the run: does a save cost more as the
 * thread grows?), MASTRA_BENCH_LOOKUP=1 (on Postgres a third storage of ours whose saves look their ids up first, the
 * general way, instead of the chain statement that checks them: the fold's A/B under the same load).
 * Run: npm run bench:script bench/mastra.ts (Node >= 22.13)
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MastraCompositeStore, MemoryStorage } from "@mastra/core/storage";
import { LibSQLStore } from "@mastra/libsql";
import { PostgresStore as MastraPostgresStore } from "@mastra/pg";
import pg from "pg";
import { mastraStorage } from "../src/mastra/index.js";
import { PostgresStore } from "../src/postgres/index.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { rng } from "./data.js";
import { benchTurn, saveBenchThread } from "./mastra-data.js";
import { BENCH_PG_URL } from "./pg-url.js";
import { sqlitePages } from "./sqlite-pages.js";
import { fmtDur, fmtNum, mdTable, nowUs, summarize } from "./stats.js";

const MESSAGES = Number(process.env.MASTRA_BENCH_MESSAGES ?? 1000);
const READS = Number(process.env.MASTRA_BENCH_READS ?? 50);
const TENTHS = process.env.MASTRA_BENCH_TENTHS === "1";
const LOOKUP = process.env.MASTRA_BENCH_LOOKUP === "1";
const ENGINES = new Set(
  (process.env.MASTRA_BENCH_ENGINES ?? "sqlite,postgres").split(",").map((s) => s.trim()),
);

interface Target {
  name: string;
  engine: string;
  storage: MastraCompositeStore;
  size(): Promise<number>;
  close(): Promise<void>;
}

async function sqliteTargets(dir: string): Promise<Target[]> {
  const ours = join(dir, "agent-session.db");
  const theirs = join(dir, "libsql.db");
  const store = new SqliteStore(ours);
  const libsql = new LibSQLStore({ id: "libsql", url: `file:${theirs}` });
  return [
    {
      name: "agent-session",
      engine: "SQLite",
      storage: mastraStorage(store),
      size: async () => sqlitePages(ours).bytes,
      close: () => store.close(),
    },
    {
      name: "@mastra/libsql",
      engine: "SQLite",
      storage: libsql,
      size: async () => sqlitePages(theirs).bytes,
      close: () => libsql.close(),
    },
  ];
}

async function postgresTargets(): Promise<{ targets: Target[]; drop(): Promise<void> }> {
  const database = `mastra_bench_${process.pid}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: BENCH_PG_URL });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  await admin(`CREATE DATABASE ${database}`);
  const at = new URL(BENCH_PG_URL);
  at.pathname = `/${database}`;
  const pool = new pg.Pool({ connectionString: at.href, max: 4 });
  const size = (schema: string) => async () => {
    const { rows } = await pool.query<{ bytes: string }>(
      `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')`,
      [schema],
    );
    return Number(rows[0]?.bytes ?? 0);
  };
  const store = await PostgresStore.open(pool, { schema: "ours" });
  const theirs = new MastraPostgresStore({ id: "pg", connectionString: at.href, schemaName: "theirs" });
  const targets: Target[] = [
    {
      name: "agent-session",
      engine: "Postgres",
      storage: mastraStorage(store),
      size: size("ours"),
      close: () => store.close(),
    },
    {
      name: "@mastra/pg",
      engine: "Postgres",
      storage: theirs,
      size: size("theirs"),
      close: () => theirs.close(),
    },
  ];
  if (LOOKUP) {
    const general = await PostgresStore.open(pool, { schema: "lookup" });
    // Declines every save's chain of new ids, as an engine without one does (sql/timed-messages/reads.ts).
    Object.defineProperty(general.timedMessages, "appendNew", { value: async () => false });
    targets.push({
      name: "agent-session, look-up first",
      engine: "Postgres",
      storage: mastraStorage(general),
      size: size("lookup"),
      close: () => general.close(),
    });
  }
  const drop = async () => {
    await pool.end();
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  };
  return { targets, drop };
}

const progress = (msg: string) =>
  process.stderr.write(`[mastra ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "mastra-bench-"));
  const targets: Target[] = [];
  let drop: (() => Promise<void>) | undefined;
  if (ENGINES.has("sqlite")) targets.push(...(await sqliteTargets(dir)));
  if (ENGINES.has("postgres")) {
    const pgTargets = await postgresTargets();
    targets.push(...pgTargets.targets);
    drop = pgTargets.drop;
  }
  const memories: MemoryStorage[] = [];
  const empty: number[] = [];
  const threadId = randomUUID();
  for (const target of targets) {
    await target.storage.init();
    const memory = (await target.storage.getStore("memory")) as MemoryStorage;
    await saveBenchThread(memory, threadId);
    memories.push(memory);
    empty.push(await target.size());
  }
  const next = rng(7);
  const saves = targets.map(() => [] as number[]);
  progress(`saving ${MESSAGES} messages on ${targets.length} storages`);
  for (let i = 0; i < MESSAGES; i += 2) {
    const turn = benchTurn(next, threadId, i);
    for (let k = 0; k < targets.length; k++) {
      const j = (k + i / 2) % targets.length; // a rotating order
      const start = nowUs();
      await memories[j]!.saveMessages({ messages: turn.map((m) => ({ ...m })) });
      saves[j]!.push(nowUs() - start);
    }
  }
  const lists = targets.map(() => [] as number[]);
  for (let r = 0; r < READS; r++) {
    for (let j = 0; j < targets.length; j++) {
      const start = nowUs();
      const { messages } = await memories[j]!.listMessages({
        threadId,
        perPage: 40,
        orderBy: { field: "createdAt", direction: "DESC" },
      });
      lists[j]!.push(nowUs() - start);
      if (messages.length !== 40) throw new Error(`${targets[j]!.name} listed ${messages.length}`);
    }
  }
  // Sizes once every storage is closed: a SQLite file's WAL is checkpointed whole only when no connection holds it
  // (measured with the store open, the figure moved by a few hundred bytes a message from run to run).
  for (const target of targets) await target.close();
  const rows: string[][] = [];
  for (let j = 0; j < targets.length; j++) {
    const target = targets[j]!;
    const s = summarize(saves[j]!);
    const firstTenth = summarize(saves[j]!.slice(0, Math.ceil(saves[j]!.length / 10)));
    const lastTenth = summarize(saves[j]!.slice(-Math.ceil(saves[j]!.length / 10)));
    const l = summarize(lists[j]!);
    const bytes = (await target.size()) - empty[j]!;
    rows.push([
      target.engine,
      target.name,
      fmtDur(s.p50),
      `${fmtDur(firstTenth.p50)} → ${fmtDur(lastTenth.p50)}`,
      fmtDur(l.p50),
      fmtNum(Math.round(bytes / MESSAGES)),
    ]);
  }
  console.log(
    mdTable(
      [
        "engine",
        "storage",
        "save a turn (2 messages), p50",
        "first tenth → last tenth, p50",
        "list the last 40, p50",
        "bytes on disk a message",
      ],
      rows,
    ),
  );
  if (TENTHS) printTenths(targets, saves);
  await drop?.();
  rmSync(dir, { recursive: true, force: true });
}

// Each storage's save p50 in each tenth of the run, in µs: a row a storage.
function printTenths(targets: readonly Target[], saves: readonly number[][]): void {
  const rows = targets.map((target, j) => {
    const all = saves[j]!;
    const size = Math.ceil(all.length / 10);
    const cells = Array.from({ length: 10 }, (_, k) =>
      fmtNum(Math.round(summarize(all.slice(k * size, (k + 1) * size)).p50)),
    );
    return [`${target.engine} ${target.name}`, ...cells];
  });
  console.log(mdTable(["save p50 (µs) by tenth", ...Array.from({ length: 10 }, (_, k) => `${k + 1}`)], rows));
}

await main();
