/**
 * Postgres footprint: one session of N ~700-byte messages (bench/data.ts words) per size, loaded through the bulk
 * import, then the size of every relation and index against the raw message JSON, session-scoped and store-wide
 * search p50/p99 (one- and two-word queries of every frequency band) and one-by-one appends. Standalone:
 *   node --import tsx bench/postgres-footprint.ts
 * Env: FOOTPRINT_SIZES (default 10000,100000), FOOTPRINT_APPENDS (default 1000), FOOTPRINT_LOAD (`import`, the
 * default, or `append`: one appendMessage per message, as a live session grows, with synchronous_commit off),
 * FOOTPRINT_GIN (storage parameters for the full-text index, to compare), AGENT_SESSION_PG_URL.
 * Each size lives in its own schema (`agent_session_fp_<n>`), dropped afterwards.
 */
import pg from "pg";
import { PostgresStore } from "../src/postgres/index.js";
import type { SessionMessage } from "../src/types.js";
import { BANDS, makeText, rng, VOCABULARY } from "./data.js";

const URL = process.env.AGENT_SESSION_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const WORDS = 105; // ~700 bytes of message JSON
const MiB = 1024 * 1024;

function sizes(): number[] {
  return (process.env.FOOTPRINT_SIZES ?? "10000,100000")
    .split(",")
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}

async function* items(sessionId: string, n: number) {
  const now = new Date().toISOString();
  yield {
    kind: "session" as const,
    session: {
      id: sessionId,
      info: {
        id: sessionId,
        name: sessionId,
        parent_session_id: null,
        model: null,
        source: "bench",
        input_tokens: 0,
        output_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        estimated_cost: 0,
        end_reason: null,
        created_at: now,
        updated_at: now,
      },
      leafId: `m${n - 1}`,
    },
  };
  const r = rng(5);
  for (let i = 0; i < n; i++) {
    const message: SessionMessage = {
      id: `m${i}`,
      role: i % 2 === 0 ? "user" : "assistant",
      parts: [{ type: "text", text: makeText(r, WORDS) }],
    };
    yield {
      kind: "message" as const,
      message: {
        id: message.id,
        parentId: i === 0 ? null : `m${i - 1}`,
        role: message.role,
        createdAt: new Date(Date.parse("2026-01-01T00:00:00Z") + i * 1000).toISOString(),
        content: JSON.stringify(message),
      },
    };
  }
}

function pct(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const mib = (b: number) => `${(b / MiB).toFixed(1)} MiB`;

function queries(n: number, words: number, seed: number): string[] {
  const r = rng(seed);
  const bands = Object.values(BANDS);
  return Array.from({ length: n }, (_, i) => {
    const [lo, hi] = bands[i % bands.length]!;
    return Array.from({ length: words }, () => VOCABULARY[lo + Math.floor(r() * (hi - lo))]!).join(" ");
  });
}

async function one(client: pg.Client, n: number, appends: number): Promise<string> {
  const schema = `agent_session_fp_${n}`;
  const out: string[] = [];
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const store = await PostgresStore.open(client, { schema });
  try {
    const t0 = performance.now();
    const byAppend = process.env.FOOTPRINT_LOAD === "append";
    // Experiments with the full-text index's storage parameters, e.g. FOOTPRINT_GIN="fastupdate = off".
    if (process.env.FOOTPRINT_GIN) {
      await client.query(`ALTER INDEX ${schema}.agent_messages_search SET (${process.env.FOOTPRINT_GIN})`);
    }
    if (byAppend) {
      await client.query("SET synchronous_commit = off");
      const session = store.session("s1");
      for await (const item of items("s1", n)) {
        if (item.kind === "message") await session.appendMessage(JSON.parse(item.message.content));
      }
      await client.query("RESET synchronous_commit");
    } else {
      const result = await store.transfer.importSession(items("s1", n));
      if (result.messages.inserted !== n) throw new Error(`inserted ${result.messages.inserted} of ${n}`);
    }
    const loadS = (performance.now() - t0) / 1000;
    await client.query(`VACUUM ANALYZE ${schema}.agent_messages`);
    const [raw] = (
      await client.query(
        `SELECT sum(octet_length(content))::float8 AS raw, avg(pg_column_size(content))::float8 AS content,
          avg(coalesce(pg_column_size(search), 0))::float8 AS search, count(*)::int AS n
         FROM ${schema}.agent_messages`,
      )
    ).rows as { raw: number; content: number; search: number; n: number }[];
    const rawBytes = raw!.raw;
    const { rows: rels } = await client.query(
      `SELECT c.relname AS name, c.relkind AS kind, pg_relation_size(c.oid)::float8 AS rel,
         pg_total_relation_size(c.oid)::float8 AS total, pg_indexes_size(c.oid)::float8 AS idx
       FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
       WHERE s.nspname = $1 AND c.relkind IN ('r', 'i') ORDER BY c.relkind DESC, pg_total_relation_size(c.oid) DESC`,
      [schema],
    );
    out.push(
      `### ${n.toLocaleString("en-US")} messages (one session; raw JSON ${mib(rawBytes)}, ${Math.round(rawBytes / n)} B/message; load ${loadS.toFixed(0)} s)`,
      "",
      `Per row: stored content ${raw!.content.toFixed(0)} B, search vector ${raw!.search.toFixed(0)} B (pg_column_size).`,
      "",
      "| relation | kind | size | × raw JSON |",
      "| --- | --- | --- | --- |",
    );
    let total = 0;
    for (const r of rels as { name: string; kind: string; rel: number; total: number; idx: number }[]) {
      if (r.kind === "r") {
        total += r.total;
        if (r.total < 64 * 1024) continue;
        out.push(
          `| ${r.name} (heap + toast) | table | ${mib(r.total - r.idx)} | ${((r.total - r.idx) / rawBytes).toFixed(2)}× |`,
        );
      } else if (r.rel >= 64 * 1024) {
        out.push(`| ${r.name} | index | ${mib(r.rel)} | ${(r.rel / rawBytes).toFixed(2)}× |`);
      }
    }
    out.push(`| **all relations** | | **${mib(total)}** | **${(total / rawBytes).toFixed(2)}×** |`, "");
    // How much of the full-text index is left-over space from growing it row by row (a fresh build packs pages).
    const gin = `${schema}.agent_messages_search`;
    const ginSize = async () =>
      Number(
        (
          (await client.query("SELECT pg_relation_size($1::regclass)::float8 AS b", [gin])).rows[0] as {
            b: number;
          }
        ).b,
      );
    const before = await ginSize();
    await client.query(`REINDEX INDEX ${gin}`);
    const after = await ginSize();
    out.push(
      `Loaded by ${byAppend ? "appendMessage, one by one" : "the bulk import"}; full-text index ${mib(before)} (${(before / rawBytes).toFixed(2)}× raw), ${mib(after)} (${(after / rawBytes).toFixed(2)}×) after REINDEX.`,
      "",
    );

    const session = store.session("s1");
    const rows: string[] = [];
    for (const words of [1, 2]) {
      const qs = queries(90, words, 7 + words);
      for (const q of qs.slice(0, 10)) await session.searchMessages!(q, 20);
      const scoped: number[] = [];
      const wide: number[] = [];
      for (const q of qs) {
        let s = performance.now();
        await session.searchMessages!(q, 20);
        scoped.push(performance.now() - s);
        s = performance.now();
        await store.searchMessages(q, { limit: 20 });
        wide.push(performance.now() - s);
      }
      rows.push(
        `| ${words}-word, session | ${qs.length} | ${ms(pct(scoped, 50))} | ${ms(pct(scoped, 99))} |`,
      );
      rows.push(`| ${words}-word, store-wide | ${qs.length} | ${ms(pct(wide, 50))} | ${ms(pct(wide, 99))} |`);
    }
    const r = rng(11);
    const append = store.session("s1");
    const lat: number[] = [];
    const a0 = performance.now();
    for (let i = 0; i < appends; i++) {
      const s = performance.now();
      await append.appendMessage({
        id: `a${i}`,
        role: "user",
        parts: [{ type: "text", text: makeText(r, WORDS) }],
      });
      lat.push(performance.now() - s);
    }
    const perS = appends / ((performance.now() - a0) / 1000);
    rows.push(`| append after the tip | ${appends} | ${ms(pct(lat, 50))} | ${ms(pct(lat, 99))} |`);
    out.push(
      `Search (limit 20, bands common/mid/rare in turn) and appends (synchronous_commit as configured): times in ms; appends ${perS.toFixed(0)}/s.`,
      "",
      "| operation | n | p50 | p99 |",
      "| --- | --- | --- | --- |",
      ...rows,
      "",
    );
  } finally {
    if (!process.env.FOOTPRINT_KEEP) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  }
  return out.join("\n");
}

const client = new pg.Client({ connectionString: URL });
await client.connect();
try {
  const [v] = (await client.query("SELECT current_setting('server_version') AS v")).rows as { v: string }[];
  console.log(`## Postgres footprint (${v!.v})\n`);
  for (const n of sizes()) console.log(await one(client, n, Number(process.env.FOOTPRINT_APPENDS ?? "1000")));
} finally {
  await client.end();
}
