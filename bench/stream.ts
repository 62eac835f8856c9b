/**
 * Streaming history vs `getHistory`: one session of 10,000 and of 100,000 tool-heavy messages (~1 KB each) on
 * SQLite and Postgres, read whole by `getHistory` and by `Session.historyBatches` (100 rows / 1 MiB per batch).
 * Each read runs in a fresh child process, so its peak RSS (`resourceUsage().maxRSS`) is that read's alone;
 * "growth" is the peak over the RSS the process had after opening the store. Streaming's growth must not depend
 * on the session's length. Standalone: `npm run bench:script bench/stream.ts` (BENCH_STREAM_LENGTHS=10000,100000;
 * AGENT_SESSION_PG_URL for Postgres, skipped when unreachable).
 */
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";
import type { SessionStore } from "../src/contract/store.js";
import { hasTransfer, type TransferItem } from "../src/contract/transfer.js";
import { PostgresStore } from "../src/postgres/store.js";
import { Session } from "../src/session/session.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { fmtNum, mdTable } from "./stats.js";

const SCHEMA = "agent_session_bench_stream";
const PG_URL = process.env.AGENT_SESSION_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const LENGTHS = (process.env.BENCH_STREAM_LENGTHS ?? "10000,100000").split(",").map(Number);
const MODES = ["getHistory", "historyBatches"] as const;
type Mode = (typeof MODES)[number];
export type Backend = "sqlite" | "postgres";

const sqliteFile = (length: number) => join(tmpdir(), `agent-session-bench-stream-${length}.db`);
const sessionId = (length: number) => `stream-${length}`;

async function openStore(
  backend: Backend,
  length: number,
): Promise<{ store: SessionStore; close(): Promise<void> }> {
  if (backend === "sqlite") {
    const store = new SqliteStore(sqliteFile(length));
    return { store, close: () => store.close() };
  }
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  const store = await PostgresStore.open(client, { schema: SCHEMA });
  return {
    store,
    close: async () => {
      await store.close();
      await client.end();
    },
  };
}

/** A tool-heavy turn: a call and its ~1 KB output. */
function content(i: number): { role: string; json: string } {
  const role = i % 2 === 0 ? "user" : "assistant";
  const output = `line ${i}: ${"result data, some numbers 12345 and words ".repeat(22)}`;
  const parts =
    role === "user"
      ? [{ type: "text", text: `step ${i}: run the next tool` }]
      : [{ type: "tool-run", toolCallId: `c${i}`, state: "output-available", input: { i }, output }];
  return { role, json: JSON.stringify({ id: `m${i}`, role, parts }) };
}

async function* items(length: number): AsyncGenerator<TransferItem> {
  const id = sessionId(length);
  yield { kind: "session", session: { id, info: null, leafId: `m${length - 1}` } };
  for (let i = 0; i < length; i++) {
    const { role, json } = content(i);
    const createdAt = new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString();
    yield {
      kind: "message",
      message: { id: `m${i}`, parentId: i === 0 ? null : `m${i - 1}`, role, createdAt, content: json },
    };
  }
}

export async function load(backend: Backend, length: number): Promise<void> {
  if (backend === "sqlite")
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${sqliteFile(length)}${suffix}`, { force: true });
  const { store, close } = await openStore(backend, length);
  try {
    if (!hasTransfer(store)) throw new Error("the store cannot import");
    const result = await store.transfer.importSession(items(length));
    if (result.messages.inserted !== length)
      throw new Error(`inserted ${result.messages.inserted} of ${length}`);
  } finally {
    await close();
  }
}

/** The child: one read, then its time and memory as JSON on stdout. */
async function child(backend: Backend, length: number, mode: Mode): Promise<void> {
  const { store, close } = await openStore(backend, length);
  const session = new Session(store, { sessionId: sessionId(length) });
  await session.getLatestLeaf();
  // Live heap: what the read still holds after a full collection (--expose-gc), sampled while it holds the most —
  // RSS alone also counts garbage V8 has not collected yet.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heapBase = process.memoryUsage().heapUsed;
  let held = 0;
  const sample = (): void => {
    gc?.();
    held = Math.max(held, process.memoryUsage().heapUsed - heapBase);
  };
  const baseline = process.memoryUsage().rss;
  const peakBefore = process.resourceUsage().maxRSS * 1024;
  const t0 = performance.now();
  let count = 0;
  if (mode === "getHistory") {
    const history = await session.getHistory();
    sample();
    count = history.length;
  } else {
    let batches = 0;
    for await (const batch of session.historyBatches({ batchSize: 100 })) {
      count += batch.length;
      if (++batches % 100 === 0) sample();
    }
  }
  const ms = performance.now() - t0;
  const peak = process.resourceUsage().maxRSS * 1024;
  await close();
  if (count !== length) throw new Error(`read ${count} of ${length}`);
  process.stdout.write(
    JSON.stringify({ ms, peak, held, growth: Math.max(0, peak - Math.max(baseline, peakBefore)) }),
  );
}

async function postgresReachable(): Promise<string | null> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await client.end();
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Loads the sessions, measures each read in a child process, returns a Markdown report. */
export async function benchStream(): Promise<string> {
  const self = fileURLToPath(import.meta.url);
  const rows: string[][] = [];
  const skipped = await postgresReachable();
  const backends: Backend[] = skipped ? ["sqlite"] : ["sqlite", "postgres"];
  for (const backend of backends) {
    for (const length of LENGTHS) {
      const t0 = performance.now();
      await load(backend, length);
      process.stderr.write(
        `stream: loaded ${length} messages on ${backend} in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`,
      );
      for (const mode of MODES) {
        const out = execFileSync(
          process.execPath,
          ["--expose-gc", ...process.execArgv, self, "--child", backend, String(length), mode],
          {
            encoding: "utf8",
            env: process.env,
          },
        );
        const r = JSON.parse(out) as { ms: number; peak: number; held: number; growth: number };
        rows.push([
          backend === "sqlite" ? "SQLite file" : "Postgres (pg)",
          fmtNum(length),
          mode === "getHistory" ? "getHistory()" : "historyBatches({ batchSize: 100 })",
          `${fmtNum(r.ms)} ms`,
          `${fmtNum(r.peak / 1e6)} MB`,
          `${fmtNum(r.growth / 1e6)} MB`,
          `${fmtNum(r.held / 1e6)} MB`,
        ]);
      }
    }
    if (backend === "sqlite") for (const length of LENGTHS) rmSync(sqliteFile(length), { force: true });
  }
  if (!skipped) await postgresReachable();
  const note = skipped ? `\nPostgres skipped: ${skipped}\n` : "";
  return `### Streaming history vs getHistory (~1 KB tool-heavy messages)\n\n${mdTable(
    ["backend", "messages", "read", "time", "peak RSS", "growth over the open store", "live heap held"],
    rows,
  )}${note}`;
}

if (process.argv[2] === "--child") {
  await child(process.argv[3] as Backend, Number(process.argv[4]), process.argv[5] as Mode);
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await benchStream());
}
