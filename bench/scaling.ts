/**
 * Costs that must not grow with what a call does not return: reads and searches of one session as its compaction
 * overlays pile up (nested, as repeated compaction makes them), and searches kept to the active path as a message
 * gathers forks, searches whose role or time filter asks for what lies behind every newer match, and active-branch
 * searches of a session whose abandoned branch holds every newer match. Memory, SQLite (`:memory:`) and the
 * Postgres server (AGENT_SESSION_PG_URL or this machine's; a
 * schema of its own per store, dropped afterwards; skipped with the reason when unreachable). Medians of
 * BENCH_REPS (default 7) calls after one warm-up, in ms.
 *
 *   npm run bench:script bench/scaling.ts   (BENCH_SCALING_BACKENDS=memory,sqlite,postgres,
 *                                            BENCH_SCALING_PARTS=overlays,forks,filters,explored)
 */
import pg from "pg";
import type { SessionMessage } from "../src/contract/message.js";
import type { SessionProvider } from "../src/contract/provider.js";
import type { StoreSearchOptions } from "../src/contract/search.js";
import type { SessionStore } from "../src/contract/store.js";
import { hasTransfer, type TransferItem } from "../src/contract/transfer.js";
import { MemoryStore } from "../src/memory/store.js";
import { PostgresStore } from "../src/postgres/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { BENCH_PG_URL } from "./pg-url.js";
import { mdTable } from "./stats.js";

const REPS = Number(process.env.BENCH_REPS ?? 7);
const backends = (process.env.BENCH_SCALING_BACKENDS ?? "memory,sqlite,postgres").split(",");
const parts = (process.env.BENCH_SCALING_PARTS ?? "overlays,forks,filters,explored").split(",");
const PATH = 1000;
const OVERLAYS = [0, 10, 100, 250];
const FORKS = [1, 100, 1000];
const FILTERED = [1000, 10_000, 100_000];
const EXPLORED = [1000, 10_000, 100_000];

let pool: pg.Pool | undefined;
const schemas: string[] = [];

/** A fresh store of `backend`, or undefined when its server is unreachable (the reason is printed). */
async function openStore(backend: string): Promise<SessionStore | undefined> {
  if (backend === "memory") return new MemoryStore();
  if (backend === "sqlite") return new SqliteStore(":memory:");
  if (pool === undefined) {
    const candidate = new pg.Pool({ connectionString: BENCH_PG_URL, max: 2 });
    try {
      await candidate.query("SELECT 1");
    } catch (error) {
      await candidate.end();
      console.log(`postgres skipped: ${BENCH_PG_URL} unreachable (${(error as Error).message})`);
      return undefined;
    }
    pool = candidate;
  }
  const schema = `bench_scaling_${process.pid}_${schemas.length}`;
  schemas.push(schema);
  return PostgresStore.open(pool, { schema });
}

async function dropAll(): Promise<void> {
  if (pool === undefined) return;
  for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool.end();
}

const message = (id: string, text: string): SessionMessage => ({
  id,
  role: "user",
  parts: [{ type: "text", text }],
});

async function chain(
  session: SessionProvider,
  prefix: string,
  count: number,
  parent: string | null,
  text: string,
) {
  let parentId = parent;
  for (let i = 0; i < count; i++) {
    await session.appendMessage(message(`${prefix}${i}`, `${text} ${i}`), parentId);
    parentId = `${prefix}${i}`;
  }
}

/** The median time of `fn` in ms, after one warm-up call. */
async function median(fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** Rows of one table: an operation and its time at each size. */
type Rows = Map<string, string[]>;
const add = (rows: Rows, op: string, value: number) => rows.set(op, [...(rows.get(op) ?? []), ms(value)]);

/** The rows `measure` adds for each size, each on a fresh store of `backend`; undefined when it was skipped. */
async function perSize(
  backend: string,
  sizes: readonly number[],
  measure: (store: SessionStore, size: number, rows: Rows) => Promise<void>,
): Promise<Rows | undefined> {
  const rows: Rows = new Map();
  for (const size of sizes) {
    const store = await openStore(backend);
    if (store === undefined) return undefined;
    await measure(store, size, rows);
    await store.close();
  }
  return rows;
}

// A 1,000-message path whose first 600 messages hold "early"; N overlays from the first message, each reaching
// further than the one before (what compacting a growing history again and again leaves).
function overlays(backend: string): Promise<Rows | undefined> {
  return perSize(backend, OVERLAYS, async (store, n, rows) => {
    const session = store.session("s");
    await chain(session, "m", 600, null, "early note");
    await chain(session, "n", PATH - 600, "m599", "late note");
    for (let i = 0; i < n; i++) {
      await session.addCompaction(`summary ${i}`, "m0", `m${Math.floor(((i + 1) * 600) / n) - 1}`);
    }
    add(rows, "getHistory", await median(() => session.getHistory()));
    add(rows, "getContextTokens", await median(async () => session.getContextTokens?.()));
    add(rows, "search, 20 hits", await median(() => store.searchMessages("early", { sessionId: "s" })));
    add(
      rows,
      "search, 20 hits, context 1",
      await median(() => store.searchMessages("early", { context: 1 })),
    );
  });
}

// A 300-message path and B forks at its 100th message (two messages each), all holding "early".
function forks(backend: string): Promise<Rows | undefined> {
  return perSize(backend, FORKS, async (store, b, rows) => {
    const session = store.session("s");
    await chain(session, "m", 100, null, "early note");
    for (let j = 0; j < b; j++) await chain(session, `f${j}-`, 2, "m99", "early fork");
    await chain(session, "n", 200, "m99", "early main");
    add(rows, "search, all branches", await median(() => store.searchMessages("early", { sessionId: "s" })));
    add(rows, "search, active path", await median(() => store.searchMessages("early", { branch: "active" })));
    add(
      rows,
      'search, active path, match "all"',
      await median(() => store.searchMessages("early", { branch: "active", match: "all" })),
    );
    // Then an overlay on each fork: none lies on the active path, and each must be checked to know it.
    for (let j = 0; j < b; j++) await session.addCompaction(`fork summary ${j}`, `f${j}-0`, `f${j}-1`);
    add(rows, "getHistory, an overlay on each fork", await median(() => session.getHistory()));
    add(
      rows,
      "getContextTokens, an overlay on each fork",
      await median(async () => session.getContextTokens?.()),
    );
  });
}

// N messages of one session, all holding "common", imported; only the oldest is an assistant's and from 2020, so a
// role or time filter's one match lies behind every newer match of the word.
function filters(backend: string): Promise<Rows | undefined> {
  return perSize(backend, FILTERED, async (store, n, rows) => {
    if (!hasTransfer(store)) throw new Error(`${backend} has no transfer import`);
    await store.transfer.importSession(commonSession(n));
    for (const match of ["any", "all"] as const) {
      const search = (options: StoreSearchOptions) => () =>
        store.searchMessages("common", { ...options, match });
      add(rows, `"${match}", no filter`, await median(search({})));
      add(rows, `"${match}", role of the oldest`, await median(search({ role: "assistant" })));
      add(
        rows,
        `"${match}", until the oldest's time`,
        await median(search({ until: "2021-01-01T00:00:00Z" })),
      );
    }
  });
}

async function* commonSession(n: number, id = "s"): AsyncGenerator<TransferItem> {
  yield { kind: "session", session: { id, info: null, leafId: `m${n - 1}` } };
  const now = new Date().toISOString();
  for (let i = 0; i < n; i++) {
    const role = i === 0 ? "assistant" : "user";
    const content = JSON.stringify({ ...message(`m${i}`, `common note ${i}`), role });
    const createdAt = i === 0 ? "2020-01-01T00:00:00.000Z" : now;
    yield {
      kind: "message",
      message: { id: `m${i}`, parentId: i ? `m${i - 1}` : null, role, createdAt, content },
    };
  }
}

// A session of 20 turns holding "common", an abandoned branch of N messages off the sixth holding it too, then the
// conversation going on from the twentieth; and a plain session of 20 such turns older than it.
function explored(backend: string): Promise<Rows | undefined> {
  return perSize(backend, EXPLORED, async (store, n, rows) => {
    if (!hasTransfer(store)) throw new Error(`${backend} has no transfer import`);
    await store.transfer.importSession(commonSession(20, "plain"));
    await store.transfer.importSession(exploredSession(n));
    for (const match of ["any", "all"] as const) {
      const search = (options: StoreSearchOptions) => () =>
        store.searchMessages("common", { ...options, branch: "active", limit: 50, match });
      add(rows, `"${match}", the session`, await median(search({ sessionId: "s" })));
      add(rows, `"${match}", both sessions`, await median(search({ sessionIds: ["s", "plain"] })));
      add(rows, `"${match}", the store`, await median(search({})));
    }
  });
}

async function* exploredSession(n: number): AsyncGenerator<TransferItem> {
  yield { kind: "session", session: { id: "s", info: null, leafId: "tail" } };
  const createdAt = new Date().toISOString();
  const item = (id: string, parentId: string | null, text: string): TransferItem => ({
    kind: "message",
    message: { id, parentId, role: "user", createdAt, content: JSON.stringify(message(id, text)) },
  });
  for (let i = 0; i < 20; i++) yield item(`m${i}`, i ? `m${i - 1}` : null, `common note ${i}`);
  for (let i = 0; i < n; i++) yield item(`b${i}`, i ? `b${i - 1}` : "m5", `common branch ${i}`);
  yield item("tail", "m19", "the end");
}

/** A table of `rows` under `title`, one column per size; nothing when the backend was skipped. */
function section(title: string, columns: string[], rows: Rows | undefined): string[] {
  if (rows === undefined) return [];
  const table = mdTable(
    ["op", ...columns],
    [...rows].map(([op, values]) => [op, ...values]),
  );
  return [`\n### ${title} (ms)\n\n${table}`];
}

const out: string[] = [];
try {
  for (const backend of backends) {
    if (parts.includes("overlays")) {
      const columns = OVERLAYS.map((n) => `${n} overlays`);
      out.push(
        ...section(`${backend}: a ${PATH}-message path and its overlays`, columns, await overlays(backend)),
      );
    }
    if (parts.includes("forks")) {
      const columns = FORKS.map((b) => `${b} forks`);
      out.push(...section(`${backend}: forks at one message`, columns, await forks(backend)));
    }
    if (parts.includes("filters")) {
      const columns = FILTERED.map((n) => `${n} messages`);
      const title = `${backend}: a role or time filter behind every newer match`;
      out.push(...section(title, columns, await filters(backend)));
    }
    if (parts.includes("explored")) {
      const columns = EXPLORED.map((n) => `${n}-message branch`);
      const title = `${backend}: active-branch search, an abandoned branch holding every newer match`;
      out.push(...section(title, columns, await explored(backend)));
    }
  }
} finally {
  await dropAll();
}
console.log(out.join("\n"));
