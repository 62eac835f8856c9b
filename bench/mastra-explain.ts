/**
 * What a Mastra save's statements cost as the thread grows, on Postgres: one thread saved a turn (two messages) at a
 * time as bench/mastra.ts does, and at each size of MASTRA_EXPLAIN_AT the save's statements of the turn just saved
 * are run again under `EXPLAIN (ANALYZE, BUFFERS)` with fresh message ids, in a transaction rolled back; with the
 * registry row's and the head's table and index sizes and dead rows beside them (docs/PERFORMANCE.md, "Mastra memory
 * storages"). Prints each plan's buffer and time lines, so early and late can be compared.
 * Env: MASTRA_EXPLAIN_AT (default 200,10000), AGENT_SESSION_PG_URL (bench/pg-url.ts), MASTRA_EXPLAIN_PLANS=1 (whole plans).
 * Run: npm run bench:script bench/mastra-explain.ts (Node >= 22.13)
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { PostgresStore } from "../src/postgres/index.js";
import { rng } from "./data.js";
import { benchThread, benchTurn } from "./mastra-data.js";
import { BENCH_PG_URL } from "./pg-url.js";
import { fmtNum, mdTable, nowUs, summarize } from "./stats.js";

const AT = (process.env.MASTRA_EXPLAIN_AT ?? "200,10000").split(",").map(Number);
const WHOLE = process.env.MASTRA_EXPLAIN_PLANS === "1";
// The plan a prepared statement runs once Postgres settles on its generic plan (the store's hot statements are named).
const GENERIC = process.env.MASTRA_EXPLAIN_GENERIC === "1";
let named = 0;

interface Sent {
  text: string;
  values: unknown[];
  us?: number;
}

// Every statement a client sends, so the save's can be explained again.
const sent: Sent[] = [];
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string; values?: unknown[] };
  const text = typeof first === "string" ? first : first?.text;
  const values = typeof first === "string" ? (args[1] as unknown[]) : first?.values;
  if (typeof text !== "string") return query.apply(this, args);
  const one: Sent = { text, values: Array.isArray(values) ? values : [] };
  sent.push(one);
  const start = nowUs();
  const done = () => {
    one.us = nowUs() - start;
  };
  const callback = args.findIndex((a) => typeof a === "function");
  if (callback >= 0) {
    // pg's Pool passes a callback: time to it.
    const given = args[callback] as (...r: unknown[]) => void;
    args[callback] = (...r: unknown[]) => {
      done();
      given(...r);
    };
  }
  const result = query.apply(this, args);
  if (result instanceof Promise) result.then(done, () => {});
  return result;
} as typeof pg.Client.prototype.query;

async function main(): Promise<void> {
  const database = `mastra_explain_${process.pid}`;
  const admin = new pg.Client({ connectionString: BENCH_PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const at = new URL(BENCH_PG_URL);
  at.pathname = `/${database}`;
  const pool = new pg.Pool({ connectionString: at.href, max: 2 });
  const store = await PostgresStore.open(pool, { schema: "ours" });
  const { memory, threadId } = await benchThread(store);
  const next = rng(7);
  const last = Math.max(...AT);
  const times: { save: number[]; locate: number[]; chain: number[] } = { save: [], locate: [], chain: [] };
  for (let i = 0; i < last; i += 2) {
    const turn = benchTurn(next, threadId, i);
    sent.length = 0;
    const start = nowUs();
    await memory.saveMessages({ messages: turn });
    times.save.push(nowUs() - start);
    times.locate.push(sent.find((s) => s.text.startsWith("SELECT m.id"))?.us ?? 0);
    times.chain.push(sent.find((s) => s.text.startsWith("WITH RECURSIVE"))?.us ?? 0);
    if (AT.includes(i + 2))
      await explain(
        pool,
        i + 2,
        [...sent],
        turn.map((m) => m.id),
      );
  }
  const tenths = (all: number[]) => {
    const size = Math.ceil(all.length / 10);
    return Array.from({ length: 10 }, (_, k) =>
      fmtNum(Math.round(summarize(all.slice(k * size, (k + 1) * size)).p50)),
    );
  };
  console.log("");
  console.log(
    mdTable(
      ["p50 (µs) by tenth", ...Array.from({ length: 10 }, (_, k) => `${k + 1}`)],
      Object.entries(times).map(([name, all]) => [name, ...tenths(all)]),
    ),
  );
  await store.close();
  await pool.end();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
}

// The save's statements again with fresh ids (rolled back), and the registry's and head's sizes.
async function explain(pool: pg.Pool, messages: number, statements: Sent[], ids: string[]): Promise<void> {
  const fresh = new Map(ids.map((id) => [id, randomUUID()]));
  const swap = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(swap) : typeof value === "string" ? (fresh.get(value) ?? value) : value;
  console.log(`\n## ${messages} messages`);
  const client = await pool.connect();
  try {
    if (GENERIC) await client.query("SET plan_cache_mode = force_generic_plan");
    for (const { text, values } of statements) {
      if (!/^\s*(WITH|SELECT|UPDATE|INSERT)/i.test(text)) continue;
      await client.query("BEGIN");
      const { rows } = await client.query({
        text: `EXPLAIN (ANALYZE, BUFFERS) ${text}`,
        values: values.map(swap),
        // A named statement, so force_generic_plan plans it with its parameters unknown.
        ...(GENERIC ? { name: `explain_${++named}` } : {}),
      });
      await client.query("ROLLBACK");
      const lines = rows.map((r) => String(r["QUERY PLAN"]));
      console.log(`\n### ${text.replace(/\s+/g, " ").slice(0, 90)}…`);
      for (const line of lines)
        if (
          WHOLE ||
          /Buffers|Execution Time|Planning Time|Index.*Scan|Seq Scan|Update on|Insert on/.test(line)
        )
          console.log(line);
    }
    // Where the server has pg_stat_statements: the save's statements since the last size, on the server.
    const stats = await client
      .query(
        `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 40) AS q, calls, mean_exec_time, mean_plan_time, plans,
           shared_blks_hit / calls AS hit, shared_blks_dirtied::float8 / calls AS dirtied, wal_bytes / calls AS wal
         FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND (query LIKE 'WITH RECURSIVE%' OR query LIKE 'SELECT m.id%') ORDER BY calls DESC`,
      )
      .catch(() => undefined);
    if (stats) {
      console.log(
        "\n| statement | calls | exec ms | plan ms (plans) | buffers | dirtied | WAL bytes |\n| --- | --- | --- | --- | --- | --- | --- |",
      );
      for (const r of stats.rows)
        console.log(
          `| ${r.q} | ${r.calls} | ${Number(r.mean_exec_time).toFixed(3)} | ${Number(r.mean_plan_time).toFixed(3)} (${r.plans}) | ${r.hit} | ${Number(r.dirtied).toFixed(1)} | ${Math.round(Number(r.wal))} |`,
        );
      await client.query("SELECT pg_stat_statements_reset()");
    }
    const { rows } = await client.query(
      `SELECT c.relname, pg_relation_size(c.oid) AS bytes, s.n_live_tup, s.n_dead_tup
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
       WHERE n.nspname = 'ours' AND (c.relname LIKE 'agent_session%' OR c.relname LIKE 'agent_messages%')
       ORDER BY 1`,
    );
    console.log("\n| relation | bytes | live | dead |\n| --- | --- | --- | --- |");
    for (const r of rows)
      console.log(`| ${r.relname} | ${r.bytes} | ${r.n_live_tup ?? ""} | ${r.n_dead_tup ?? ""} |`);
  } finally {
    if (GENERIC) await client.query("RESET plan_cache_mode");
    client.release();
  }
}

await main();
