/**
 * Large messages: one 20 MB tool output appended and read back (getMessage, getHistory) on every backend, byte
 * for byte, with the bytes the store holds for it. On a local SQLite file it is one row; with 2 MB values (a
 * Durable Object's limit, `maxValueBytes`) it is split across continuation rows. Standalone:
 * `npm run bench:script bench/large.ts` (AGENT_SESSION_PG_URL for the Postgres row; skipped when unreachable).
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import type { SessionMessage } from "../src/contract/message.js";
import type { SessionStore } from "../src/contract/store.js";
import { MemoryStore } from "../src/memory/store.js";
import { PostgresStore } from "../src/postgres/store.js";
import { sqliteFileBytes } from "../src/sqlite/maintenance.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { fmtDur, fmtNum, mdTable, nowUs } from "./stats.js";

const OUTPUT_BYTES = 20_000_000;
const SCHEMA = "agent_session_bench_large";

/** A tool output of `bytes` bytes of JSON-ish log text, with some non-ASCII so UTF-8 boundaries matter. */
function toolOutput(bytes: number): SessionMessage {
  const line = 'INFO 2024-05-01T10:00:00Z worker-7 processed batch {"ok":true,"ms":12} — naïve ✓ 😀\n';
  const output = line.repeat(Math.ceil(bytes / Buffer.byteLength(line))).slice(0, bytes);
  return {
    id: "big",
    role: "assistant",
    parts: [{ type: "tool-read_log", toolCallId: "c1", state: "output-available", input: {}, output }],
  };
}

interface Backend {
  name: string;
  open(): Promise<{ store: SessionStore; bytes(): Promise<string>; close(): Promise<void> }>;
}

function sqliteBackend(name: string, maxValueBytes?: number): Backend {
  return {
    name,
    open: async () => {
      const file = join(tmpdir(), `agent-session-bench-large-${process.pid}-${maxValueBytes ?? "file"}.db`);
      const clean = () => {
        for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
      };
      clean();
      const store = new SqliteStore(file, maxValueBytes === undefined ? {} : { maxValueBytes });
      return {
        store,
        bytes: async () => `${fmtNum(sqliteFileBytes(file) / 1e6)} MB file`,
        close: async () => {
          await store.close();
          clean();
        },
      };
    },
  };
}

const postgres: Backend = {
  name: "Postgres (pg)",
  open: async () => {
    const client = new pg.Client({
      connectionString: process.env.AGENT_SESSION_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
    });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    const store = await PostgresStore.open(client, { schema: SCHEMA });
    return {
      store,
      bytes: async () => {
        const { rows } = await client.query(
          `SELECT pg_total_relation_size('${SCHEMA}.agent_messages') AS bytes`,
        );
        return `${fmtNum(Number(rows[0].bytes) / 1e6)} MB table (TOAST, compressed)`;
      },
      close: async () => {
        await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
        await store.close();
        await client.end();
      },
    };
  },
};

const BACKENDS: Backend[] = [
  {
    name: "memory",
    open: async () => {
      const store = new MemoryStore();
      return { store, bytes: async () => "–", close: () => store.close() };
    },
  },
  sqliteBackend("SQLite file (one row)"),
  sqliteBackend("SQLite, 2 MB values (as a Durable Object: 10 continuation rows)", 2_000_000),
  postgres,
];

/** Appends and reads back one 20 MB tool output per backend; returns a Markdown report. */
export async function benchLargeMessages(): Promise<string> {
  const message = toolOutput(OUTPUT_BYTES);
  const json = JSON.stringify(message);
  const rows: string[][] = [];
  for (const backend of BACKENDS) {
    let opened: Awaited<ReturnType<Backend["open"]>>;
    try {
      opened = await backend.open();
    } catch (error) {
      rows.push([
        backend.name,
        `skipped: ${error instanceof Error ? error.message : String(error)}`,
        "",
        "",
        "",
        "",
      ]);
      continue;
    }
    try {
      const s = opened.store.session("large");
      await s.appendMessage({ id: "u", role: "user", parts: [{ type: "text", text: "read the log" }] });
      let t = nowUs();
      await s.appendMessage(message);
      const append = nowUs() - t;
      t = nowUs();
      const got = await s.getMessage("big");
      const read = nowUs() - t;
      t = nowUs();
      const history = await s.getHistory();
      const walk = nowUs() - t;
      const exact = JSON.stringify(got) === json && JSON.stringify(history[1]) === json;
      rows.push([
        backend.name,
        fmtDur(append),
        fmtDur(read),
        fmtDur(walk),
        exact ? "yes" : "NO",
        await opened.bytes(),
      ]);
    } finally {
      await opened.close();
    }
  }
  return [
    "## Large messages: a 20 MB tool output round trip",
    "",
    mdTable(["backend", "append", "getMessage", "getHistory (2 messages)", "byte-identical", "stored"], rows),
    "",
    "One run each (no repetition: a round trip of 20 MB is dominated by serialising, hashing and copying it).",
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await benchLargeMessages());
}
