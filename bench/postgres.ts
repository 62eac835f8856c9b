/**
 * Postgres benchmark: appendMessage, getHistory at several depths and session-scoped search, each next to the
 * raw `SELECT 1` round trip on the same connection (the floor no statement can beat). Standalone:
 *   npm run bench:script bench/postgres.ts          (BENCH_SCALE=0.2 for a quick run; AGENT_SESSION_PG_URL to point elsewhere)
 */
import { pathToFileURL } from "node:url";
import pg from "pg";
import type { SessionMessage } from "../src/contract/message.js";
import { PostgresStore } from "../src/postgres/index.js";
import { BENCH_PG_URL } from "./pg-url.js";

const SCHEMA = "agent_session_bench";

interface Stats {
  n: number;
  mean: number;
  p50: number;
  p99: number;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
  return {
    n: sorted.length,
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    p50: at(50),
    p99: at(99),
  };
}

async function time(runs: number, fn: (i: number) => Promise<unknown>): Promise<Stats> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn(i);
    samples.push(performance.now() - t0);
  }
  return stats(samples);
}

// A deterministic corpus: pseudo-words with Zipf-like frequencies, so "common", "mid" and "rare" terms exist.
function corpus(seed: number) {
  let state = seed;
  const random = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  const syllables = ["ka", "lo", "mi", "ne", "so", "ta", "vu", "ri", "den", "por", "gal", "fin"];
  const vocabulary = Array.from({ length: 3000 }, (_, i) => {
    let word = "";
    for (let n = i + 7; n > 0; n = Math.floor(n / syllables.length)) word += syllables[n % syllables.length];
    return word;
  });
  const word = () => vocabulary[Math.min(vocabulary.length - 1, Math.floor(1 / (random() + 1e-4)) - 1)]!;
  const text = (words: number) => Array.from({ length: words }, word).join(" ");
  return { vocabulary, text };
}

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** Measures the Postgres backend at `scale` (1 = 1,000 appends, paths up to 10,000, 10,000 searchable rows) and returns a Markdown report. */
export async function benchPostgres(scale = 1, url = BENCH_PG_URL): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const rows: string[][] = [];
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    const store = await PostgresStore.open(client, { schema: SCHEMA });
    const { rows: settings } = await client.query(
      "SELECT current_setting('server_version') AS version, current_setting('synchronous_commit') AS sync",
    );
    const { version, sync } = settings[0] as { version: string; sync: string };
    const { text, vocabulary } = corpus(42);

    const floor = await time(500, () => client.query("SELECT 1"));
    const add = (name: string, s: Stats) =>
      rows.push([name, String(s.n), ms(s.mean), ms(s.p50), ms(s.p99), `${(s.p50 / floor.p50).toFixed(1)}×`]);
    add("`SELECT 1` round trip (floor)", floor);
    // agent-session's hot statements are named prepared statements, which skip parsing: this is their floor.
    add(
      "`SELECT 1` as a named prepared statement",
      await time(500, () => client.query({ name: "floor", text: "SELECT 1" })),
    );

    await client.query(`CREATE TABLE ${SCHEMA}.plain (id bigserial PRIMARY KEY, body text NOT NULL)`);
    add(
      "plain one-row INSERT (commit cost)",
      await time(300, () => client.query(`INSERT INTO ${SCHEMA}.plain (body) VALUES ($1)`, [text(40)])),
    );

    const appends = Math.max(100, Math.round(1000 * scale));
    const chat = store.session("append");
    add(
      `appendMessage after the tip (${appends}×)`,
      await time(appends, (i) => chat.appendMessage(message(`a${i}`, text(40)))),
    );
    add(
      "appendMessage with an explicit parent",
      await time(Math.max(50, appends / 5), (i) => chat.appendMessage(message(`b${i}`, text(40)), `a${i}`)),
    );

    // Building the deep session and the search corpus is setup, not measurement: skip the per-commit flush.
    await client.query("SET synchronous_commit = off");
    const depths = [100, 1000, 10000].filter((d) => d <= Math.max(100, 10000 * scale));
    const deep = store.session("deep");
    for (let i = 0; i < depths[depths.length - 1]!; i++) await deep.appendMessage(message(`d${i}`, text(40)));
    const sessions = Math.max(2, Math.round(10 * scale));
    for (let s = 0; s < sessions; s++) {
      const session = store.session(`search${s}`);
      for (let i = 0; i < 1000; i++)
        await session.appendMessage(message(`s${i}`, text(30), i % 2 ? "assistant" : "user"));
    }
    await client.query(`ANALYZE ${SCHEMA}.agent_messages`);
    await client.query(`SET synchronous_commit = ${sync}`);

    for (const depth of depths) {
      const runs = depth >= 10000 ? 8 : depth >= 1000 ? 30 : 100;
      add(
        `getHistory, depth ${depth.toLocaleString("en-US")}`,
        await time(runs, () => deep.getHistory(`d${depth - 1}`)),
      );
    }
    const last = depths[depths.length - 1]!;
    await deep.addCompaction("summary", "d1", `d${last - 201}`);
    add(
      `getHistory, depth ${last.toLocaleString("en-US")} compacted to 202 rows`,
      await time(30, () => deep.getHistory(`d${last - 1}`)),
    );
    add("getLatestLeaf", await time(200, () => deep.getLatestLeaf()));

    const scoped = store.session("search0");
    const queries: [string, string][] = [
      ["common word", vocabulary[0]!],
      ["mid-frequency word", vocabulary[60]!],
      ["rare word", vocabulary[2500]!],
      ["two words", `${vocabulary[3]} ${vocabulary[40]}`],
      ["phrase", `"${vocabulary[0]} ${vocabulary[1]}"`],
    ];
    for (const [label, query] of queries) {
      add(`session search: ${label}`, await time(60, () => scoped.searchMessages!(query, 20)));
    }
    add("store-wide search: common word", await time(30, () => store.searchMessages(vocabulary[0]!)));
    const [counts] = (await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.agent_messages`)).rows as {
      n: number;
    }[];
    await client.query(`DROP SCHEMA ${SCHEMA} CASCADE`);
    return [
      `## Postgres (${version}, synchronous_commit=${sync}, pg over TCP, one connection)`,
      "",
      `${counts?.n.toLocaleString("en-US")} messages in the store; times in ms; ratio = p50 / \`SELECT 1\` p50.`,
      "",
      "| operation | n | mean | p50 | p99 | p50 vs SELECT 1 |",
      "| --- | --- | --- | --- | --- | --- |",
      ...rows.map((r) => `| ${r.join(" | ")} |`),
    ].join("\n");
  } finally {
    await client.end();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const scale = Number(process.env.BENCH_SCALE ?? "1");
  if (!(scale > 0)) throw new Error(`BENCH_SCALE must be a positive number, got ${process.env.BENCH_SCALE}`);
  console.log(await benchPostgres(scale));
}
