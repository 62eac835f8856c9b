/**
 * Postgres search at scale: loads the benchmark's big store (1M × BENCH_SCALE messages in 1,000 × BENCH_SCALE
 * sessions, bench/data.ts) into a dedicated schema through the bulk import (`store.transfer.importSession`), then
 * times session-scoped and store-wide `searchMessages` per term band. The schema is kept, so a rerun whose message
 * count matches skips the load (BENCH_RELOAD=1 forces it). Standalone:
 *   npm run bench:script bench/postgres-scale.ts    (BENCH_SCALE=0.1 for a quick run; AGENT_SESSION_PG_URL elsewhere)
 */
import { pathToFileURL } from "node:url";
import pg from "pg";
import type { TransferItem } from "../src/contract/transfer.js";
import { PostgresStore } from "../src/postgres/index.js";
import { type BenchQuery, makeQueries, planStore, type StorePlan, type StoreRow, storeRows } from "./data.js";
import { BENCH_PG_URL } from "./pg-url.js";
import { benchSessionItem } from "./transfer-items.js";

const SCHEMA = "agent_session_bench_1m";
// Imports in flight at once, each on its own connection (the JS side builds the tsvector text).
const CONCURRENCY = 2;
const BASE_TIME = Date.UTC(2025, 0, 1);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

async function* sessionItems(sessionId: string, rows: StoreRow[]): AsyncGenerator<TransferItem> {
  const created = new Date(BASE_TIME + rows[0]!.seq * 1000).toISOString();
  const updated = new Date(BASE_TIME + rows[rows.length - 1]!.seq * 1000).toISOString();
  yield benchSessionItem(sessionId, rows[rows.length - 1]!.message.id, created, updated);
  for (const row of rows) {
    yield {
      kind: "message",
      message: {
        id: row.message.id,
        parentId: row.parentId,
        role: row.message.role,
        createdAt: new Date(BASE_TIME + row.seq * 1000).toISOString(),
        content: JSON.stringify(row.message),
      },
    };
  }
}

/** Streams the rows, importing each session as soon as all its rows were generated; returns the load time in ms. */
async function load(stores: PostgresStore[], plan: StorePlan): Promise<number> {
  const t0 = performance.now();
  const sizes = new Map(plan.sessions.map((s) => [s.id, s.size]));
  const pending = new Map<string, StoreRow[]>();
  const idle = [...stores];
  const inFlight = new Set<Promise<void>>();
  let done = 0;
  let lastLog = 0;
  const start = async (sessionId: string, rows: StoreRow[]) => {
    while (idle.length === 0) await Promise.race(inFlight);
    const store = idle.pop()!;
    const job = store.transfer.importSession(sessionItems(sessionId, rows)).then((result) => {
      if (result.messages.inserted !== rows.length) {
        throw new Error(`${sessionId}: inserted ${result.messages.inserted} of ${rows.length}`);
      }
      done += rows.length;
      idle.push(store);
      inFlight.delete(job);
    });
    inFlight.add(job);
  };
  for (const row of storeRows(plan)) {
    let rows = pending.get(row.sessionId);
    if (!rows) {
      rows = [];
      pending.set(row.sessionId, rows);
    }
    rows.push(row);
    if (rows.length === sizes.get(row.sessionId)) {
      pending.delete(row.sessionId);
      await start(row.sessionId, rows);
      if (done - lastLog >= 50_000) {
        lastLog = done;
        const s = (performance.now() - t0) / 1000;
        console.error(`loaded ${done.toLocaleString("en")} messages in ${s.toFixed(0)} s`);
      }
    }
  }
  await Promise.all(inFlight);
  return performance.now() - t0;
}

interface Row {
  band: string;
  scope: string;
  n: number;
  p50: number;
  p99: number;
  hits: number;
}

async function measure(store: PostgresStore, queries: BenchQuery[], scoped: boolean): Promise<Row[]> {
  const byBand = new Map<string, { samples: number[]; hits: number }>();
  for (const q of queries) {
    const t0 = performance.now();
    const hits = await store.searchMessages(
      q.term,
      scoped ? { sessionId: q.sessionId, limit: 20 } : { limit: 20 },
    );
    const elapsed = performance.now() - t0;
    let entry = byBand.get(q.band);
    if (!entry) {
      entry = { samples: [], hits: 0 };
      byBand.set(q.band, entry);
    }
    entry.samples.push(elapsed);
    entry.hits += hits.length;
  }
  const all = { samples: [] as number[], hits: 0 };
  const rows: Row[] = [];
  const row = (band: string, e: { samples: number[]; hits: number }): Row => {
    const sorted = [...e.samples].sort((a, b) => a - b);
    const n = sorted.length;
    return {
      band,
      scope: scoped ? "session" : "store-wide",
      n,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      hits: e.hits / n,
    };
  };
  for (const [band, e] of byBand) {
    rows.push(row(band, e));
    all.samples.push(...e.samples);
    all.hits += e.hits;
  }
  rows.push(row("all", all));
  return rows;
}

/** Loads (unless already loaded) and measures at `scale`; returns a Markdown report. */
export async function benchPostgresScale(scale = 1, url = BENCH_PG_URL, queryCount = 200): Promise<string> {
  const plan = planStore(scale);
  const clients = Array.from({ length: CONCURRENCY }, () => new pg.Client({ connectionString: url }));
  await Promise.all(clients.map((c) => c.connect()));
  const client = clients[0]!;
  try {
    const table = `${SCHEMA}.agent_messages`;
    const { rows: exists } = await client.query("SELECT to_regclass($1) AS t", [table]);
    let count = 0;
    if (exists[0]?.t && process.env.BENCH_RELOAD !== "1") {
      const { rows } = await client.query(`SELECT count(*)::bigint AS n FROM ${table}`);
      count = Number(rows[0].n);
    }
    let loadLine: string;
    if (count === plan.total) {
      loadLine = `Store already loaded (${count.toLocaleString("en")} messages); load skipped.`;
    } else {
      await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      const stores: PostgresStore[] = [];
      for (const c of clients) stores.push(await PostgresStore.open(c, { schema: SCHEMA }));
      const loadMs = await load(stores, plan);
      const t1 = performance.now();
      await client.query(`VACUUM ANALYZE ${table}`);
      const vacuumMs = performance.now() - t1;
      loadLine =
        `Loaded ${plan.total.toLocaleString("en")} messages in ${plan.sessions.length} sessions in ` +
        `${(loadMs / 1000).toFixed(0)} s (${Math.round(plan.total / (loadMs / 1000)).toLocaleString("en")} msg/s, ` +
        `transfer.importSession, ${CONCURRENCY} connections) + VACUUM ANALYZE ${(vacuumMs / 1000).toFixed(0)} s.`;
    }
    const store = await PostgresStore.open(client, { schema: SCHEMA });
    const { rows: version } = await client.query("SELECT current_setting('server_version') AS v");
    const { rows: size } = await client.query(
      `SELECT pg_size_pretty(pg_total_relation_size('${table}')) AS total`,
    );
    const queries = makeQueries(queryCount, plan.typical);
    // Warm-up: one pass over a few queries of each scope, so the first samples do not pay for cold pages.
    for (const q of queries.slice(0, 15)) {
      await store.searchMessages(q.term, { sessionId: q.sessionId, limit: 20 });
      await store.searchMessages(q.term, { limit: 20 });
    }
    const rows = [...(await measure(store, queries, true)), ...(await measure(store, queries, false))];
    const out = [
      `Postgres ${version[0].v}, ${plan.total.toLocaleString("en")} messages, ${plan.sessions.length} sessions, ` +
        `messages table ${size[0].total}.`,
      loadLine,
      "",
      `${queryCount} single-term queries (bands of bench/data.ts), limit 20; times in ms; hits = mean results per query.`,
      "",
      "| band | scope | n | p50 | p99 | hits |",
      "| --- | --- | --- | --- | --- | --- |",
      ...rows.map(
        (r) => `| ${r.band} | ${r.scope} | ${r.n} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.hits.toFixed(1)} |`,
      ),
    ];
    return out.join("\n");
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const scale = Number(process.env.BENCH_SCALE ?? 1);
  console.log(await benchPostgresScale(scale));
}
