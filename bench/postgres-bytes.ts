/**
 * Postgres bytes per message, per relation, by door (docs/PERFORMANCE.md, "PostgreSQL footprint, per relation"):
 * one thread loaded through the Mastra door (`saveMessages`, a turn of two ~330-character messages, as
 * bench/mastra.ts) or as LangGraph recall writes it (`appendMessage` of each graph message's session message, as
 * src/langgraph/recall.ts does; bench/langgraph-bytes.ts runs the graph itself, 10x slower). The heap, TOAST and
 * every index of the messages table, and every other table that grew, at each size of PGBYTES_SIZES (default
 * 1000,10000) of the same load, so the marginal bytes a message (between the last two sizes) stand beside the
 * average. Then, store by store interleaved, the p50 and mean of a plain append and a Mastra save, and the p50 of a
 * session search. PGBYTES_VARIANTS (default `v8`, the schema as it is):
 * - `off`: the full-text GIN index without pending list; a number: the pending list limited to that many kB;
 * - `lz4` / `pglz`: content and vector kept in the row (MAIN) with `toast_tuple_target = 128` (no effect: a row
 *   under ~2 kB never reaches the toaster); `lz4+off` the same without pending list; `lz4only`: the compression
 *   method alone (rows over ~2 kB: set PGBYTES_WORDS, default 50, to ~300);
 * - `clean`: the pending list merged after the load; `vacuum`: the tables vacuumed every 1,000 messages, as
 *   autovacuum would on a server that runs it.
 * PGBYTES_RUNS repeats the whole (default 1), the variants' order alternating; PGBYTES_TIMED operations (200).
 * Run: npm run bench:script bench/postgres-bytes.ts (Node >= 22.13 for the Mastra door)
 */
import { randomUUID } from "node:crypto";
import { loadavg } from "node:os";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { MastraDBMessage } from "@mastra/core/memory";
import type { MemoryStorage } from "@mastra/core/storage";
import pg from "pg";
import { sessionMessageOf } from "../src/langgraph/messages.js";
import { mastraStorage } from "../src/mastra/index.js";
import { PostgresStore } from "../src/postgres/index.js";
import { bandQueries, makeText, rng } from "./data.js";
import { BENCH_PG_URL } from "./pg-url.js";
import { fmtDur, fmtNum, mdTable, nowUs, summarize } from "./stats.js";

const list = (name: string, fallback: string) =>
  (process.env[name] ?? fallback).split(",").map((s) => s.trim());
const SIZES = list("PGBYTES_SIZES", "1000,10000").map(Number);
const VARIANTS = list("PGBYTES_VARIANTS", "v8");
const DOORS = list("PGBYTES_DOORS", "mastra,langgraph");
const RUNS = Number(process.env.PGBYTES_RUNS ?? 1);
const TIMED = Number(process.env.PGBYTES_TIMED ?? 200);
const WORDS = Number(process.env.PGBYTES_WORDS ?? 50);

// What a variant changes on the fresh store's messages table and its search index before the load.
function variantSql(v: string, schema: string): string[] {
  const gin = `${schema}.agent_messages_search`;
  if (v === "v8" || v === "clean" || v === "vacuum") return [];
  if (v === "off") return [`ALTER INDEX ${gin} SET (fastupdate = off)`];
  // Compressed in the row: both columns kept in line (MAIN) and the toaster asked to try from 128 bytes on (a row
  // under ~2 kB is otherwise never compressed). "+off": the same without pending list.
  const inRow = v.match(/^(lz4|pglz)(\+off)?$/);
  if (inRow)
    return [
      `ALTER TABLE ${schema}.agent_messages ALTER COLUMN content SET STORAGE MAIN,
        ALTER COLUMN content SET COMPRESSION ${inRow[1]}, ALTER COLUMN search SET COMPRESSION ${inRow[1]},
        SET (toast_tuple_target = 128)`,
      ...(inRow[2] ? [`ALTER INDEX ${gin} SET (fastupdate = off)`] : []),
    ];
  // The compression method alone (applies to rows over ~2 kB only, which the toaster handles).
  if (v === "lz4only")
    return [
      `ALTER TABLE ${schema}.agent_messages ALTER COLUMN content SET COMPRESSION lz4, ALTER COLUMN search SET COMPRESSION lz4`,
    ];
  const kb = Number(v);
  if (!Number.isInteger(kb) || kb < 64) throw new Error(`PGBYTES_VARIANTS: bad variant ${v}`);
  return [`ALTER INDEX ${gin} SET (gin_pending_list_limit = ${kb})`];
}

interface Built {
  door: string;
  variant: string;
  schema: string;
  store: PostgresStore;
  memory?: MemoryStorage;
  thread: string;
  sizes: Map<number, Map<string, number>>;
  columns: Record<string, number>;
}

// The messages table's relations (heap, its TOAST with the TOAST index, each index), every other table, the whole.
async function relationSizes(pool: pg.Pool, schema: string): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ name: string; bytes: string }>(
    `SELECT 'heap' AS name, pg_relation_size(c.oid) AS bytes FROM pg_class c
       WHERE c.oid = $1::regclass
     UNION ALL SELECT 'toast', COALESCE(pg_total_relation_size(NULLIF(c.reltoastrelid, 0)), 0) FROM pg_class c
       WHERE c.oid = $1::regclass
     UNION ALL SELECT i.relname, pg_relation_size(i.oid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
       WHERE x.indrelid = $1::regclass
     UNION ALL SELECT 'other table ' || c.relname || ' (with indexes)', pg_total_relation_size(c.oid) FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $2 AND c.relkind = 'r' AND c.oid <> $1::regclass
     UNION ALL SELECT 'all relations of the schema', SUM(pg_total_relation_size(c.oid)) FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $2 AND c.relkind = 'r'`,
    [`${schema}.agent_messages`, schema],
  );
  return new Map(rows.map((r) => [r.name, Number(r.bytes)]));
}

const turnOf = (next: () => number, thread: string, i: number, t0: number): MastraDBMessage[] =>
  [i, i + 1].map((n) => {
    const text = makeText(next, WORDS);
    return {
      id: randomUUID(),
      threadId: thread,
      resourceId: "bench-user",
      role: n % 2 === 0 ? "user" : "assistant",
      createdAt: new Date(t0 + n * 1000),
      content: { format: 2, parts: [{ type: "text", text }], content: text },
    } as MastraDBMessage;
  });

async function build(pool: pg.Pool, door: string, variant: string, run: number): Promise<Built> {
  const schema = `pgbytes_${door}_${variant.replace(/\W/g, "_")}_${run}`;
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const store = await PostgresStore.open(pool, { schema });
  for (const sql of variantSql(variant, schema)) await pool.query(sql);
  const thread = randomUUID();
  const b: Built = { door, variant, schema, store, thread, sizes: new Map(), columns: {} };
  const next = rng(7);
  const t0 = Date.parse("2025-01-01T00:00:00Z");
  const max = Math.max(...SIZES);
  if (door === "mastra") {
    const storage = mastraStorage(store);
    await storage.init();
    b.memory = (await storage.getStore("memory")) as MemoryStorage;
    const now = new Date();
    await b.memory.saveThread({
      thread: { id: thread, resourceId: "bench-user", title: "bench", createdAt: now, updatedAt: now },
    });
  }
  b.sizes.set(0, await relationSizes(pool, schema));
  const session = store.session(thread);
  for (let i = 0; i < max; i += 2) {
    if (b.memory) await b.memory.saveMessages({ messages: turnOf(next, thread, i, t0) });
    else {
      const user = sessionMessageOf(new HumanMessage({ id: randomUUID(), content: makeText(next, WORDS) }));
      await session.appendMessage(user!);
      const reply = sessionMessageOf(new AIMessage({ id: randomUUID(), content: makeText(next, WORDS) }));
      await session.appendMessage(reply!);
    }
    // As autovacuum would on a server that runs it (this bench's may not): the schema's tables every 1,000.
    if (variant === "vacuum" && (i + 2) % 1000 === 0)
      for (const table of ["agent_messages", "agent_sessions", "agent_session_heads"])
        await pool.query(`VACUUM ${schema}.${table}`);
    if (SIZES.includes(i + 2)) {
      if (variant === "clean" && i + 2 === max)
        await pool.query(`SELECT gin_clean_pending_list('${schema}.agent_messages_search'::regclass)`);
      b.sizes.set(i + 2, await relationSizes(pool, schema));
    }
  }
  const { rows } = await pool.query(
    `SELECT avg(octet_length(content))::float8 AS json, avg(pg_column_size(content))::float8 AS content,
       avg(coalesce(pg_column_size(search), 0))::float8 AS search, avg(pg_column_size(m.*))::float8 AS tuple,
       avg(pg_column_size(content_hash))::float8 AS hash, avg(pg_column_size(id))::float8 AS id
     FROM ${schema}.agent_messages m`,
  );
  b.columns = rows[0] as Record<string, number>;
  return b;
}

function sizeTable(b: Built): string {
  const [lo, hi] = [SIZES[SIZES.length - 2] ?? 0, SIZES[SIZES.length - 1]!];
  const base = b.sizes.get(0)!;
  const grown = (name: string) => (b.sizes.get(hi)?.get(name) ?? 0) > (base.get(name) ?? 0);
  const names = [...b.sizes.get(hi)!.keys()].filter((name) => !name.startsWith("other ") || grown(name));
  const rows = names.map((name) => {
    const at = (n: number) => (b.sizes.get(n)?.get(name) ?? 0) - (base.get(name) ?? 0);
    return [
      name,
      ...SIZES.map((n) => fmtNum(Math.round(at(n) / n))),
      fmtNum(Math.round((at(hi) - at(lo)) / (hi - lo))),
    ];
  });
  const c = b.columns;
  return [
    `### ${b.door}, ${b.variant}: bytes a message (net of the empty schema)`,
    "",
    mdTable(["relation", ...SIZES.map((n) => `average at ${n}`), `marginal ${lo}→${hi}`], rows),
    "",
    `Columns, average a row: JSON ${fmtNum(Math.round(c.json!))} B (stored ${fmtNum(Math.round(c.content!))}), search vector ${fmtNum(Math.round(c.search!))}, hash ${fmtNum(Math.round(c.hash!))}, id ${fmtNum(Math.round(c.id!))}; whole tuple ${fmtNum(Math.round(c.tuple!))}.`,
    "",
  ].join("\n");
}

// Timed, store by store in turn: blocks of 10 plain appends, of 5 Mastra saves, of 10 session searches.
async function timings(built: Built[]): Promise<Map<Built, Record<string, number[]>>> {
  const out = new Map(
    built.map((b) => [b, { append: [], save: [], search: [] } as Record<string, number[]>]),
  );
  const next = rng(11);
  const queries = bandQueries(TIMED, 1, 3);
  for (let block = 0; block * 10 < TIMED; block++) {
    const order = block % 2 === 0 ? built : [...built].reverse();
    for (const b of order) {
      const t = out.get(b)!;
      const session = b.store.session(b.thread);
      for (let i = 0; i < 10; i++) {
        const start = nowUs();
        await session.appendMessage({
          id: `a${block}_${i}`,
          role: "user",
          parts: [{ type: "text", text: makeText(next, WORDS) }],
        });
        t.append!.push(nowUs() - start);
      }
      if (b.memory)
        for (let i = 0; i < 5; i++) {
          const turn = turnOf(next, b.thread, 100_000 + block * 10 + i * 2, Date.now());
          const start = nowUs();
          await b.memory.saveMessages({ messages: turn });
          t.save!.push(nowUs() - start);
        }
      for (let i = 0; i < 10; i++) {
        const start = nowUs();
        await session.searchMessages!(queries[(block * 10 + i) % queries.length]!, 20);
        t.search!.push(nowUs() - start);
      }
    }
  }
  return out;
}

const timing = (samples: number[]) => {
  const s = summarize(samples);
  return `${fmtDur(s.p50)} / ${fmtDur(s.mean)}`;
};

const pool = new pg.Pool({ connectionString: BENCH_PG_URL, max: 4 });
const load = () => loadavg();
try {
  const summary: string[][] = [];
  for (let run = 0; run < RUNS; run++) {
    for (const door of DOORS) {
      const order = run % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
      const built: Built[] = [];
      for (const v of order) built.push(await build(pool, door, v, run));
      const before = load();
      const times = await timings(built);
      const after = load();
      for (const b of built) {
        console.log(sizeTable(b));
        const t = times.get(b)!;
        const [lo, hi] = [SIZES[SIZES.length - 2] ?? 0, SIZES[SIZES.length - 1]!];
        const all = (n: number) =>
          (b.sizes.get(n)!.get("all relations of the schema") ?? 0) -
          (b.sizes.get(0)!.get("all relations of the schema") ?? 0);
        summary.push([
          String(run + 1),
          door,
          b.variant,
          fmtNum(Math.round(all(lo) / lo)),
          fmtNum(Math.round(all(hi) / hi)),
          fmtNum(Math.round((all(hi) - all(lo)) / (hi - lo))),
          timing(t.append!),
          t.save!.length ? timing(t.save!) : "–",
          fmtDur(summarize(t.search!).p50),
          `${before.map((x: number) => x.toFixed(1)).join(" ")} → ${after.map((x: number) => x.toFixed(1)).join(" ")}`,
        ]);
      }
      for (const b of built) await pool.query(`DROP SCHEMA IF EXISTS ${b.schema} CASCADE`);
    }
  }
  const [lo, hi] = [SIZES[SIZES.length - 2] ?? 0, SIZES[SIZES.length - 1]!];
  console.log(
    mdTable(
      [
        "run",
        "door",
        "variant",
        `B/msg at ${lo}`,
        `B/msg at ${hi}`,
        "marginal",
        "append p50 / mean",
        "save p50 / mean",
        "search p50",
        "load avg",
      ],
      summary,
    ),
  );
} finally {
  await pool.end();
}
