/**
 * What opening a session with skill blocks costs: `SkillTracker.restore` (the loaded skills rebuilt from the
 * history) on a MESSAGES-message session (default 20,000: user and assistant turns, ~500 B each) whose assistant
 * turns load two skills, on a SQLite file and on Postgres (BENCH_PG_URL). Median of RUNS (default 7) restores,
 * each on a fresh provider. `npm run bench:script bench/skill-restore.ts`.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { SkillTracker } from "../src/context/skills.js";
import type { SessionMessage } from "../src/contract/message.js";
import type { SessionStore } from "../src/contract/store.js";
import { PostgresStore } from "../src/postgres/index.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { BENCH_PG_URL } from "./pg-url.js";

const MESSAGES = Number(process.env.MESSAGES ?? 20_000);
const RUNS = Number(process.env.RUNS ?? 7);
const SCHEMA = "bench_skill_restore";
const filler = "lorem ipsum dolor sit amet consectetur adipiscing elit ".repeat(8);

function turn(i: number): SessionMessage {
  const id = `m${i}`;
  if (i % 2 === 0) return { id, role: "user", parts: [{ type: "text", text: `${i} ${filler}` }] };
  const key = i === 201 ? "deploy" : i === MESSAGES - 999 ? "review" : undefined;
  if (key === undefined) return { id, role: "assistant", parts: [{ type: "text", text: `${i} ${filler}` }] };
  return {
    id,
    role: "assistant",
    parts: [
      {
        type: "tool-load_context",
        toolCallId: `c${i}`,
        state: "output-available",
        input: { label: "skills", key },
        output: `The ${key} document. ${filler}`,
      },
    ],
  };
}

async function seed(store: SessionStore): Promise<void> {
  const s = store.session("long");
  for (let i = 0; i < MESSAGES; i++) await s.appendMessage(turn(i));
}

async function measure(name: string, store: SessionStore): Promise<void> {
  await seed(store);
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const tracker = new SkillTracker();
    const started = performance.now();
    await tracker.restore(store.session("long"));
    times.push(performance.now() - started);
    if (tracker.keys().size !== 2) throw new Error(`restored ${[...tracker.keys()].join(", ")}`);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  console.log(`${name}: restore of ${MESSAGES} messages, median of ${RUNS}: ${median.toFixed(1)} ms`);
}

const dir = fileURLToPath(new URL("../.bench-data/tmp/", import.meta.url));
mkdirSync(dir, { recursive: true });
const file = join(dir, `skill-restore-${process.pid}.db`);
const sqlite = new SqliteStore(file);
try {
  await measure("sqlite file", sqlite);
} finally {
  await sqlite.close();
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
}

const client = new pg.Client({ connectionString: BENCH_PG_URL });
await client.connect();
try {
  await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await measure("postgres", await PostgresStore.open(client, { schema: SCHEMA }));
} finally {
  await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await client.end();
}
