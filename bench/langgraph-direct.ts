/**
 * LangGraph checkpointer calls timed directly, no graph (docs/PERFORMANCE.md, "LangGraph checkpointers"): a thread
 * built by puts of a messages list growing by one message a put (each put then its message written as a pending
 * write, as a graph's step does), then at each size `getTuple` of the latest and put + putWrites of the next
 * message, interleaved over `AgentSessionSaver` and LangGraph's own saver on the same engine. With LG_DIRECT_BASE
 * (the root of another checkout of agent-session, built: its `dist/`), that checkout's saver runs in the same
 * process too, interleaved: an A/B of a change under the same load.
 * Env: LG_DIRECT_AT (sizes, default 100,500), LG_DIRECT_READS (getTuple calls a size, default 20), LG_DIRECT_PUTS
 * (put + putWrites pairs a size, default 20), LG_DIRECT_ENGINES (sqlite,postgres), LG_DIRECT_WORDS (default 50).
 * Run: npm run bench:script bench/langgraph-direct.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { type BaseCheckpointSaver, emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import pg from "pg";
import * as current from "../src/index.js";
import { AgentSessionSaver } from "../src/langgraph/index.js";
import { PostgresStore } from "../src/postgres/index.js";
import { makeText, rng } from "./data.js";
import { BENCH_PG_URL } from "./pg-url.js";
import { fmtDur, mdTable, nowUs, summarize } from "./stats.js";

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const list = (name: string, fallback: string) => (process.env[name] ?? fallback).split(",").filter(Boolean);
const AT = list("LG_DIRECT_AT", "100,500").map(Number);
const READS = num("LG_DIRECT_READS", 20);
const PUTS = num("LG_DIRECT_PUTS", 20);
const WORDS = num("LG_DIRECT_WORDS", 50);
const ENGINES = new Set(list("LG_DIRECT_ENGINES", "sqlite,postgres"));
const BASE = process.env.LG_DIRECT_BASE;

interface Target {
  label: string;
  saver: BaseCheckpointSaver;
  config: RunnableConfig;
  close(): Promise<void>;
}

type Savers = { AgentSessionSaver: typeof AgentSessionSaver; PostgresStore: typeof PostgresStore };
type Stores = { SqliteStore: new (file: string) => { close(): Promise<void> } };

// The builds measured: this checkout's, and LG_DIRECT_BASE's when named.
async function builds(): Promise<{ name: string; savers: Savers; stores: Stores }[]> {
  const out = [
    {
      name: "agent-session",
      savers: { AgentSessionSaver, PostgresStore },
      stores: current as unknown as Stores,
    },
  ];
  if (BASE) {
    const at = (p: string) => pathToFileURL(resolve(BASE, "dist", p)).href;
    out.push({
      name: "base",
      savers: {
        AgentSessionSaver: (await import(at("langgraph/index.js"))).AgentSessionSaver,
        PostgresStore: (await import(at("postgres/index.js"))).PostgresStore,
      },
      stores: (await import(at("index.js"))) as Stores,
    });
  }
  return out;
}

async function targets(dir: string): Promise<{ list: Target[]; drop(): Promise<void> }> {
  const out: Target[] = [];
  const thread = (id: string) => ({ configurable: { thread_id: id, checkpoint_ns: "" } });
  const all = await builds();
  let drop = async () => {};
  if (ENGINES.has("sqlite")) {
    for (const b of all) {
      const store = new b.stores.SqliteStore(join(dir, `${b.name}.db`));
      const saver = new b.savers.AgentSessionSaver(store as never);
      out.push({ label: `SQLite: ${b.name}`, saver, config: thread("t"), close: () => store.close() });
    }
    const theirs = SqliteSaver.fromConnString(join(dir, "theirs.db"));
    out.push({
      label: "SQLite: SqliteSaver",
      saver: theirs,
      config: thread("t"),
      close: async () => {
        theirs.db.close();
      },
    });
  }
  if (ENGINES.has("postgres")) {
    const database = `lg_direct_${process.pid}`;
    const admin = new pg.Client({ connectionString: BENCH_PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(BENCH_PG_URL);
    url.pathname = `/${database}`;
    const pools: pg.Pool[] = [];
    for (const b of all) {
      const pool = new pg.Pool({ connectionString: url.href, max: 4 });
      // The database is dropped with FORCE at the end: an idle client's termination is expected then.
      pool.on("error", () => undefined);
      pools.push(pool);
      const store = await b.savers.PostgresStore.open(pool, { schema: b.name.replace("-", "_") });
      const saver = new b.savers.AgentSessionSaver(store);
      out.push({ label: `Postgres: ${b.name}`, saver, config: thread("t"), close: () => store.close() });
    }
    const theirs = PostgresSaver.fromConnString(url.href, { schema: "theirs" });
    await theirs.setup();
    out.push({
      label: "Postgres: PostgresSaver",
      saver: theirs,
      config: thread("t"),
      close: () => theirs.end(),
    });
    drop = async () => {
      // A pool a store keeps of its own may still hold an idle client, which the forced drop terminates.
      process.on("uncaughtException", (error) => {
        if ((error as { code?: string }).code !== "57P01") throw error;
      });
      for (const pool of pools) await pool.end();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    };
  }
  return { list: out, drop };
}

// One put of `messages` (the channel at `version`) on `t`, then its newest message as the step's pending write.
async function step(t: Target, messages: BaseMessage[], version: number): Promise<void> {
  const checkpoint = emptyCheckpoint();
  checkpoint.id = uuid6(-1);
  checkpoint.channel_values = { messages };
  checkpoint.channel_versions = { messages: version };
  const metadata = { source: "loop" as const, step: version, parents: {} };
  t.config = await t.saver.put(t.config, checkpoint, metadata, { messages: version });
  await t.saver.putWrites(t.config, [["messages", [messages[messages.length - 1]]]], `task-${version}`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-lgdirect-"));
  const { list: all, drop } = await targets(dir);
  const next = rng(89);
  const max = Math.max(...AT) + PUTS;
  const messages: BaseMessage[] = Array.from({ length: max }, (_, i) =>
    i % 2 === 0
      ? new HumanMessage({ id: `m${i}`, content: makeText(next, WORDS) })
      : new AIMessage({ id: `m${i}`, content: makeText(next, WORDS) }),
  );
  const rows: string[][] = [];
  const load = loadavg().map((l) => l.toFixed(2));
  try {
    let built = 0;
    let version = 0;
    for (const n of AT) {
      for (; built < n; built++) {
        version++;
        for (const t of all) await step(t, messages.slice(0, built + 1), version);
      }
      const reads = all.map(() => [] as number[]);
      // In a rotating order, so no saver always runs first (after the others' garbage).
      const order = (i: number) => all.map((_, j) => (i + j) % all.length);
      for (let i = 0; i < READS; i++)
        for (const k of order(i)) {
          const t = all[k]!;
          const t0 = nowUs();
          await t.saver.getTuple({ configurable: { thread_id: "t", checkpoint_ns: "" } });
          reads[k]!.push(nowUs() - t0);
        }
      // put + putWrites of the next messages, on the thread itself (a linear run: the saver read its latest).
      const puts = all.map(() => [] as number[]);
      for (let i = 0; i < PUTS; i++) {
        version++;
        for (const k of order(i)) {
          const t = all[k]!;
          const t0 = nowUs();
          await step(t, messages.slice(0, built + 1), version);
          puts[k]!.push(nowUs() - t0);
        }
        built++;
      }
      rows.push([`${n} msgs: getTuple latest, p50`, ...reads.map((s) => fmtDur(summarize(s).p50))]);
      rows.push([`${n} msgs: put + putWrites, p50`, ...puts.map((s) => fmtDur(summarize(s).p50))]);
      process.stderr.write(`[langgraph-direct] ${n} messages measured\n`);
    }
    console.log(
      `load average at the start / end: ${load.join(", ")} / ${loadavg()
        .map((l) => l.toFixed(2))
        .join(", ")}\n`,
    );
    console.log(mdTable(["", ...all.map((t) => t.label)], rows));
  } finally {
    for (const t of all) await t.close();
    await drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
