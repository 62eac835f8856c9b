// Citus against one PostgreSQL server (docs/POSTGRES.md, "Past one server: Citus"): append p50 after the tip (the
// cluster's routed call, and the statement a store with a change log still sends), a kept stream's append of
// chunks, search p50 in one session, then
// a store of `BENCH_SCALE` × 100,000 messages seeded by concurrent appenders on both and searched store-wide. The
// two stores are written and searched interleaved, so the machine's load falls on both alike. Without a cluster
// (AGENT_SESSION_CITUS_URL, default the coordinator of ../shared/citus/cluster.sh on 5440) the table says why.
// Part of `npm run bench` (BENCH_ONLY=citus); standalone: `npx tsx bench/citus.ts`. BENCH_CITUS_STORE_WIDE=0 leaves
// out the seeding and the store-wide search (minutes), for repeated runs of the append and one-session rows.
import { pathToFileURL } from "node:url";
import pg from "pg";
import { PostgresStore } from "../src/postgres/index.js";
import { BENCH_PG_URL } from "./pg-url.js";
import { fmtDur, mdTable, summarize, timeUs } from "./stats.js";

const CITUS_URL = process.env.AGENT_SESSION_CITUS_URL ?? "postgres://postgres@127.0.0.1:5440/postgres";
const STORE_WIDE = process.env.BENCH_CITUS_STORE_WIDE !== "0";

/** Null when `url` is a Citus coordinator with an active worker, else why not. */
async function citusUnavailable(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    const { rows } = await client.query("SELECT count(*)::int AS n FROM citus_get_active_worker_nodes()");
    return rows[0]?.n > 0 ? null : `the coordinator at ${url} has no active worker`;
  } catch (error) {
    return `no Citus coordinator at ${url} (${error instanceof Error ? error.message : String(error)})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

// Pseudo-words with Zipf-like frequencies, deterministic, so searches hit common and rare terms alike.
const VOCABULARY = Array.from({ length: 2000 }, (_, i) => {
  const syllables = ["ka", "lo", "mi", "ne", "so", "ta", "vu", "ri", "den", "por", "gal", "fin"];
  let word = "";
  for (let n = i + 13; n > 0; n = Math.floor(n / syllables.length)) word += syllables[n % syllables.length];
  return word;
});
function words(seed: number, count: number): string {
  let state = seed * 2654435761 + 1;
  const out: string[] = [];
  for (let w = 0; w < count; w++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    out.push(VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(1 / (state / 0x7fffffff + 1e-3)) - 1)]!);
  }
  return out.join(" ");
}
const message = (id: string, seed: number) => ({
  id,
  role: seed % 2 ? "assistant" : "user",
  parts: [{ type: "text" as const, text: words(seed, 30) }],
});
// Two words of middle frequency: a search that matches a few percent of the messages.
const query = (q: number) => `${VOCABULARY[20 + (q % 40)]} ${VOCABULARY[60 + ((q * 7) % 80)]}`;

type Side = "single" | "cluster";

/** `run` on both stores, interleaved, `times` times each: the samples (µs) per store. */
async function interleaved(times: number, run: (side: Side, i: number) => Promise<unknown>) {
  const samples: Record<Side, number[]> = { single: [], cluster: [] };
  for (let i = 0; i < times; i++) {
    for (const side of ["single", "cluster"] as const) samples[side].push(await timeUs(() => run(side, i)));
  }
  return samples;
}

/** `total` messages over sessions of 100, appended by `writers` concurrent appenders: messages a second. */
async function seed(store: PostgresStore, total: number, writers: number): Promise<number> {
  const sessions = Math.ceil(total / 100);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      for (let s = next++; s < sessions; s = next++) {
        const chat = store.session(`seed-${s}`);
        for (let i = 0; i < 100 && s * 100 + i < total; i++)
          await chat.appendMessage(message(`m${i}`, s * 100 + i));
      }
    }),
  );
  return total / ((performance.now() - started) / 1000);
}

/** The seeding rate on both stores and their store-wide search, as rows of the table. */
async function storeWide(
  stores: Record<Side, PostgresStore>,
  total: number,
  sizes: { appends: number; searches: number },
  rows: string[][],
  row: (what: string, samples: Record<Side, number[]>) => void,
): Promise<void> {
  const rates = {
    single: await seed(stores.single, total, 8),
    cluster: await seed(stores.cluster, total, 8),
  };
  rows.push([
    `seeding: ${total.toLocaleString("en")} appends by 8 concurrent writers`,
    `${Math.round(rates.single)}/s`,
    `${Math.round(rates.cluster)}/s`,
    `${(rates.single / rates.cluster).toFixed(2)}× the time`,
  ]);
  row(
    `store-wide search over ${(total + sizes.appends).toLocaleString("en")} messages (10 hits)`,
    await interleaved(sizes.searches, (side, q) => stores[side].searchMessages(query(q), { limit: 10 })),
  );
}

/** The Citus table (or why it was skipped). */
export async function benchCitus(scale = 1): Promise<string> {
  const title = "## Citus: a coordinator and two workers against one PostgreSQL server";
  const reason = await citusUnavailable(CITUS_URL);
  if (reason) return `${title}\n\nskipped: ${reason}`;
  const appends = Math.max(50, Math.round(300 * Math.min(1, scale)));
  const searches = Math.max(20, Math.round(100 * Math.min(1, scale)));
  const total = Math.max(2_000, Math.round(100_000 * scale));
  const schema = `agent_session_citus_bench_${process.pid}`;
  const pools = {
    single: new pg.Pool({ connectionString: BENCH_PG_URL, max: 8 }),
    cluster: new pg.Pool({ connectionString: CITUS_URL, max: 8 }),
  };
  const drop = (pool: pg.Pool, name: string) => pool.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
  try {
    const open = (side: Side, name: string, changeLog = false) =>
      PostgresStore.open(pools[side], { schema: name, distributed: side === "cluster", changeLog });
    for (const side of ["single", "cluster"] as const) {
      for (const name of [schema, `${schema}_log`]) await drop(pools[side], name);
    }
    const stores = { single: await open("single", schema), cluster: await open("cluster", schema) };
    const logged = {
      single: await open("single", `${schema}_log`, true),
      cluster: await open("cluster", `${schema}_log`, true),
    };
    const rows: string[][] = [];
    const row = (what: string, samples: Record<Side, number[]>) => {
      const [single, cluster] = [summarize(samples.single).p50, summarize(samples.cluster).p50];
      rows.push([what, fmtDur(single), fmtDur(cluster), `${(cluster / single).toFixed(2)}×`]);
    };
    row(
      "append after the tip",
      await interleaved(appends, (side, i) => stores[side].session("tip").appendMessage(message(`t${i}`, i))),
    );
    row(
      "append, store with a change log",
      await interleaved(appends, (side, i) => logged[side].session("tip").appendMessage(message(`t${i}`, i))),
    );
    // A kept stream's append (ai-sdk/stream-writer.ts flushes the chunks that arrived since its last write): on the
    // cluster, routed to the session's worker (docs/POSTGRES.md, "What runs on one node").
    for (const side of ["single", "cluster"] as const)
      await stores[side].streams.start("tip", "answer", Date.now());
    row(
      "kept stream: append of 8 chunks",
      await interleaved(appends, (side, i) =>
        stores[side].streams.append(
          "tip",
          "answer",
          Array.from({ length: 8 }, (_, c) => ({ seq: i * 8 + c, chunk: `${words(i * 8 + c, 3)} ` })),
          Date.now(),
        ),
      ),
    );
    row(
      `search in one session (${appends} messages, 10 hits)`,
      await interleaved(searches, (side, q) =>
        stores[side].searchMessages(query(q), { sessionId: "tip", limit: 10 }),
      ),
    );
    if (STORE_WIDE) await storeWide(stores, total, { appends, searches }, rows, row);
    for (const store of [...Object.values(stores), ...Object.values(logged)]) await store.close();
    return [
      title,
      "",
      `One store on each, interleaved, on one shared 2-core machine (other work ran meanwhile): ${appends} appends of a ` +
        `30-word message to one session, ${searches} two-word searches; the cluster at Citus's default 32 shards a table.`,
      "",
      mdTable(["operation", "PostgreSQL p50", "Citus p50", "Citus / PostgreSQL"], rows),
    ].join("\n");
  } finally {
    for (const side of ["single", "cluster"] as const) {
      for (const name of [schema, `${schema}_log`]) await drop(pools[side], name).catch(() => undefined);
      await pools[side].end();
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await benchCitus(Number(process.env.BENCH_SCALE ?? "1")));
}
