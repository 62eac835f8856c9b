/**
 * Where a LangGraph thread's bytes go in `AgentSessionSaver` (docs/PERFORMANCE.md, "LangGraph checkpointers"): the
 * same graph as bench/langgraph.ts (a `StateGraph` over `MessagesAnnotation`, a fake chat model, a user message and
 * a reply a turn) run for one thread, then every table and index of the store listed with its bytes on disk (SQLite:
 * `dbstat`; Postgres: the relation, its TOAST and its indexes), each minus its size in the empty schema, summed as
 * the checkpoint tables (with their indexes) and recall's copy (the session's messages, their search index and the
 * rest), and, for the checkpoint tables, the rows and the payload bytes of each column, and how many pending writes
 * are kept as a reference to a value (src/sql/checkpoints/write-refs.ts) and input rows as a reference to the value
 * that took their message (value-refs.ts). Env: LG_BYTES_MESSAGES
 * (default 1000), LG_BYTES_WORDS (default 50),
 * LG_BYTES_ENGINES (sqlite,postgres).
 * Run: npm run bench:script bench/langgraph-bytes.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import pg from "pg";
import { AgentSessionSaver } from "../src/langgraph/index.js";
import { PostgresStore } from "../src/postgres/index.js";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { makeText, rng } from "./data.js";
import { BENCH_PG_URL } from "./pg-url.js";
import { fmtNum, mdTable } from "./stats.js";

const MESSAGES = Number(process.env.LG_BYTES_MESSAGES ?? 1000);
const WORDS = Number(process.env.LG_BYTES_WORDS ?? 50);
const ENGINES = new Set((process.env.LG_BYTES_ENGINES ?? "sqlite,postgres").split(","));
const THREAD = { configurable: { thread_id: "bytes-thread" } };
const kib = (n: number) => `${fmtNum(n / 1024)} KiB`;

async function run(saver: AgentSessionSaver): Promise<number> {
  const next = rng(89);
  const replies = Array.from({ length: MESSAGES / 2 }, () => makeText(next, WORDS));
  const model = new FakeListChatModel({ responses: replies });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer: saver });
  for (let t = 0; t < MESSAGES / 2; t++)
    await graph.invoke({ messages: [new HumanMessage(makeText(next, WORDS))] }, THREAD);
  const tuple = await saver.getTuple(THREAD);
  const messages = (tuple?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
  return Buffer.byteLength(
    JSON.stringify(messages.map((m) => ({ id: m.id, role: m.getType(), content: m.content }))),
  );
}

// A relation of the checkpoint tables (a table, its TOAST or an index of one); every other one is recall's copy.
const CHECKPOINT_RELATION = /^(sqlite_autoindex_)?agent_checkpoint/;

/** Each relation's bytes minus its bytes in the empty schema, and the two parts' sums, as lines of the report. */
function parts(empty: Map<string, number>, rows: { name: string; bytes: number }[], raw: number): string {
  let checkpoints = 0;
  let recall = 0;
  for (const r of rows) {
    const grown = r.bytes - (empty.get(r.name) ?? 0);
    if (CHECKPOINT_RELATION.test(r.name)) checkpoints += grown;
    else recall += grown;
  }
  const x = (n: number) => `${kib(n)} (${fmtNum(n / raw)}×)`;
  return `Net of the empty schema: checkpoint tables ${x(checkpoints)}, recall's copy ${x(recall)}, all ${x(checkpoints + recall)}.`;
}

const COLUMNS: Record<string, string[]> = {
  agent_checkpoints: ["data", "metadata", "versions", "id", "parent_id", "session_id", "type"],
  agent_checkpoint_values: ["data", "version", "base", "tag", "channel", "type"],
  agent_checkpoint_writes: ["data", "checkpoint_id", "task_id", "task_path", "channel", "type"],
};

const DBSTAT =
  "SELECT name, sum(pgsize) AS bytes, sum(payload) AS payload FROM dbstat GROUP BY name ORDER BY bytes DESC";

// The pages of every table and index of a SQLite file (its WAL checkpointed first).
function pagesOf(file: string): { name: string; bytes: number; payload: number }[] {
  const db = new (loadBetterSqlite3())(file);
  try {
    db.pragma("wal_checkpoint(TRUNCATE)");
    return db.prepare(DBSTAT).all() as { name: string; bytes: number; payload: number }[];
  } finally {
    db.close();
  }
}

async function sqlite(dir: string): Promise<string> {
  const blank = join(dir, "empty.db");
  await new SqliteStore(blank).close();
  const empty = new Map(pagesOf(blank).map((r) => [r.name, r.bytes]));
  const file = join(dir, "bytes.db");
  const store = new SqliteStore(file);
  const raw = await run(new AgentSessionSaver(store));
  await store.close();
  const rows = pagesOf(file);
  const db = new (loadBetterSqlite3())(file);
  try {
    const total = rows.reduce((s, r) => s + r.bytes, 0);
    const lines = [`## SQLite: raw JSON ${kib(raw)}, file ${kib(total)} (${fmtNum(total / raw)}×)`, ""];
    lines.push(parts(empty, rows, raw), "");
    lines.push(
      mdTable(
        ["table or index", "pages", "payload", "× raw"],
        rows
          .filter((r) => r.bytes > 8192)
          .map((r) => [r.name, kib(r.bytes), kib(r.payload), fmtNum(r.bytes / raw)]),
      ),
    );
    lines.push("", await columns((sql) => db.prepare(sql).get() as Record<string, number>, raw)());
    return lines.join("\n");
  } finally {
    db.close();
  }
}

function columns(
  get: (sql: string) => Record<string, number> | Promise<Record<string, number>>,
  raw: number,
) {
  return async () => {
    const out: string[][] = [];
    for (const [table, cols] of Object.entries(COLUMNS)) {
      const sums = cols.map((c) => `coalesce(sum(length(${c})), 0) AS ${c}`).join(", ");
      const row = await get(`SELECT count(*) AS n, ${sums} FROM ${table}`);
      out.push([
        table,
        String(row.n),
        cols.map((c) => `${c} ${kib(Number(row[c]))}`).join(", "),
        fmtNum(cols.reduce((s, c) => s + Number(row[c]), 0) / raw),
      ]);
    }
    // Pending writes kept as a reference to a stored value (src/sql/checkpoints/write-refs.ts).
    const refs = await get("SELECT count(*) AS n FROM agent_checkpoint_writes WHERE type LIKE '%|s1'");
    // Input rows kept as a reference to the value that took their message (src/sql/checkpoints/value-refs.ts).
    const inputs = await get(
      "SELECT count(*) AS n, sum(CASE WHEN type LIKE '%|v1' THEN 1 ELSE 0 END) AS refs FROM agent_checkpoint_values WHERE channel = '__start__'",
    );
    return `${mdTable(["table", "rows", "column payloads", "× raw"], out)}\n\nPending writes kept as a reference to a value: ${refs.n}. Input (\`__start__\`) rows kept as a reference to a value: ${inputs.refs} of ${inputs.n}.`;
  };
}

// Every table (with its TOAST) and index of the bench's schema, with its bytes.
async function relations(pool: pg.Pool): Promise<{ name: string; kind: string; bytes: number }[]> {
  const { rows } = await pool.query<{ name: string; kind: string; bytes: string }>(
    `SELECT c.relname AS name, c.relkind AS kind, pg_total_relation_size(c.oid) - pg_indexes_size(c.oid) AS bytes
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'ours' AND c.relkind = 'r'
     UNION ALL
     SELECT c.relname, c.relkind, pg_relation_size(c.oid) FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'ours' AND c.relkind = 'i'
     ORDER BY 3 DESC`,
  );
  return rows.map((r) => ({ ...r, bytes: Number(r.bytes) }));
}

async function postgres(): Promise<string> {
  const database = `lg_bytes_${process.pid}`;
  const admin = new pg.Client({ connectionString: BENCH_PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const at = new URL(BENCH_PG_URL);
  at.pathname = `/${database}`;
  const pool = new pg.Pool({ connectionString: at.href, max: 4 });
  pool.on("error", () => undefined); // the database is dropped with FORCE at the end
  try {
    const store = await PostgresStore.open(pool, { schema: "ours" });
    const empty = new Map((await relations(pool)).map((r) => [r.name, r.bytes]));
    const raw = await run(new AgentSessionSaver(store));
    await store.close();
    const rows = await relations(pool);
    const lines = [`## Postgres: raw JSON ${kib(raw)}`, "", parts(empty, rows, raw), ""];
    lines.push(
      mdTable(
        ["relation (table with TOAST, or index)", "bytes", "× raw"],
        rows
          .filter((r) => r.bytes > 16384)
          .map((r) => [`${r.name} (${r.kind})`, kib(r.bytes), fmtNum(r.bytes / raw)]),
      ),
    );
    const get = async (sql: string) =>
      (await pool.query(`SET search_path = ours; ${sql}`).then((r) => (r as unknown as pg.QueryResult[])[1]!))
        .rows[0] as Record<string, number>;
    lines.push("", await columns(get, raw)());
    return lines.join("\n");
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
}

const dir = mkdtempSync(join(tmpdir(), "agent-session-lgbytes-"));
try {
  if (ENGINES.has("sqlite")) console.log(`${await sqlite(dir)}\n`);
  if (ENGINES.has("postgres")) console.log(await postgres());
} finally {
  rmSync(dir, { recursive: true, force: true });
}
