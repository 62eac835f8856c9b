/**
 * Postgres footprint: one session of N ~700-byte messages (bench/data.ts words) per size, in two stores side by
 * side (FOOTPRINT_VARIANTS, default `v7,v8`): the current schema (full-text GIN pending list limited to 1 MB,
 * migration 8) and the same with the default 4 MB list version 7 had. Reports the size of every relation and index against the
 * raw message JSON, then session-scoped and store-wide search p50/p99 (one- and two-word queries of every
 * frequency band) and one-by-one appends, interleaved between the two stores so load falls on both alike.
 *   npm run bench:script bench/postgres-footprint.ts
 * Env: FOOTPRINT_SIZES (default 10000,100000), FOOTPRINT_APPENDS (per store, default 1000), FOOTPRINT_LOAD
 * (`import`, the default, or `append`: one appendMessage per message as a live session grows, synchronous_commit
 * off), AGENT_SESSION_PG_URL. Schemas `agent_session_fp_<n>_<variant>`, dropped afterwards (FOOTPRINT_KEEP=1 keeps).
 */
import { pathToFileURL } from "node:url";
import pg from "pg";
import type { SessionMessage } from "../src/contract/message.js";
import { PostgresStore } from "../src/postgres/index.js";
import { bandQueries, makeText, rng } from "./data.js";
import { BENCH_PG_URL } from "./pg-url.js";
import { benchSessionItem } from "./transfer-items.js";

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
  yield benchSessionItem(sessionId, `m${n - 1}`, now, now);
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

interface Variant {
  name: string;
  schema: string;
  store: PostgresStore;
  raw: number;
  lines: string[];
}

interface VariantSpec {
  name: string;
  tag: string;
  /** What to change on the full-text index before the load (`SET (…)` / `RESET (…)`); null = the current schema. */
  set: string | null;
  /** What to change on the messages table before the load (`ALTER TABLE … <table>`), if anything. */
  table?: string;
}

// FOOTPRINT_VARIANTS: comma-separated; "v7" = the pending list as version 7 had it (default limit, 4 MB), "v8" = the
// current schema (1 MB), "off" = no pending list, a number = the pending list limited to that many kB, "lz4" or
// "pglz" = the current schema with the JSON and the vector compressed inside the row.
function variants(): VariantSpec[] {
  return (process.env.FOOTPRINT_VARIANTS ?? "v7,v8").split(",").map((raw) => {
    const v = raw.trim();
    if (v === "v7")
      return { name: "4 MB pending list (v7)", tag: "v7", set: "RESET (gin_pending_list_limit)" };
    if (v === "v8") return { name: "1 MB pending list (v8)", tag: "v8", set: null };
    if (v === "off") return { name: "no pending list", tag: "off", set: "SET (fastupdate = off)" };
    if (v === "lz4" || v === "pglz")
      return {
        name: `JSON and vector compressed in the row (${v})`,
        tag: v,
        set: null,
        table: `ALTER COLUMN content SET STORAGE MAIN, ALTER COLUMN content SET COMPRESSION ${v},
          ALTER COLUMN search SET STORAGE MAIN, ALTER COLUMN search SET COMPRESSION ${v}, SET (toast_tuple_target = 128)`,
      };
    const kb = Number(v);
    if (!Number.isInteger(kb) || kb < 64) throw new Error(`FOOTPRINT_VARIANTS: bad variant ${v}`);
    return { name: `${kb} kB pending list`, tag: `l${kb}`, set: `SET (gin_pending_list_limit = ${kb})` };
  });
}

async function build(client: pg.Client, n: number, v: VariantSpec): Promise<Variant> {
  const schema = `agent_session_fp_${n}_${v.tag}`;
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const store = await PostgresStore.open(client, { schema });
  if (v.set) await client.query(`ALTER INDEX ${schema}.agent_messages_search ${v.set}`);
  if (v.table) await client.query(`ALTER TABLE ${schema}.agent_messages ${v.table}`);
  const t0 = performance.now();
  const byAppend = process.env.FOOTPRINT_LOAD === "append";
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
  // Sizes as they are after the load, pending list included (autovacuum may not have come by yet).
  const rels = (
    await client.query(
      `SELECT c.relname AS name, c.relkind AS kind, pg_relation_size(c.oid)::float8 AS rel,
         pg_total_relation_size(c.oid)::float8 AS total, pg_indexes_size(c.oid)::float8 AS idx
       FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
       WHERE s.nspname = $1 AND c.relkind IN ('r', 'i') ORDER BY c.relkind DESC, pg_total_relation_size(c.oid) DESC`,
      [schema],
    )
  ).rows as { name: string; kind: string; rel: number; total: number; idx: number }[];
  const [raw] = (
    await client.query(
      `SELECT sum(octet_length(content))::float8 AS raw, avg(pg_column_size(content))::float8 AS content,
        avg(coalesce(pg_column_size(search), 0))::float8 AS search FROM ${schema}.agent_messages`,
    )
  ).rows as { raw: number; content: number; search: number }[];
  const rawBytes = raw!.raw;
  const x = (b: number) => `${mib(b)} (${(b / rawBytes).toFixed(2)}×)`;
  const lines: string[] = [];
  let total = 0;
  for (const r of rels) {
    if (r.kind === "r") {
      total += r.total;
      if (r.name === "agent_messages") lines.push(`${r.name} (heap + toast): ${x(r.total - r.idx)}`);
    } else if (r.name.startsWith("agent_messages")) lines.push(`${r.name}: ${x(r.rel)}`);
  }
  lines.push(`all relations: ${x(total)}`);
  await client.query(`VACUUM ANALYZE ${schema}.agent_messages`);
  const gin = `${schema}.agent_messages_search`;
  const ginSize = async () =>
    Number(
      (
        (await client.query("SELECT pg_relation_size($1::regclass)::float8 AS b", [gin])).rows[0] as {
          b: number;
        }
      ).b,
    );
  lines.push(`agent_messages_search after VACUUM: ${x(await ginSize())}`);
  lines.push(
    `per row: content ${raw!.content.toFixed(0)} B, search vector ${raw!.search.toFixed(0)} B; load ${loadS.toFixed(0)} s by ${byAppend ? "appendMessage" : "the bulk import"}`,
  );
  return { name: v.name, schema, store, raw: rawBytes, lines };
}

async function one(client: pg.Client, n: number, appends: number): Promise<string> {
  const built: Variant[] = [];
  try {
    for (const v of variants()) built.push(await build(client, n, v));
    const out = [
      `### ${n.toLocaleString("en-US")} messages in one session (raw JSON ${mib(built[0]!.raw)}, ${Math.round(built[0]!.raw / n)} B/message)`,
      "",
      `| | ${built.map((b) => b.name).join(" | ")} |`,
      `| --- | ${built.map(() => "---").join(" | ")} |`,
    ];
    // Lines are "label: value"; index order by size can differ between the stores, so match by label.
    const value = (b: Variant, label: string) =>
      b.lines.find((l) => l.startsWith(`${label}: `))?.slice(label.length + 2) ?? "–";
    for (const line of built[0]!.lines) {
      const label = line.slice(0, line.indexOf(": "));
      out.push(`| ${label} | ${built.map((b) => value(b, label)).join(" | ")} |`);
    }
    out.push("");
    // Search: each query on every store before the next query, the order alternating.
    const rows: string[] = [];
    for (const words of [1, 2]) {
      const qs = bandQueries(90, words, 7 + words);
      const scoped = built.map(() => [] as number[]);
      const wide = built.map(() => [] as number[]);
      for (const b of built)
        for (const q of qs.slice(0, 10)) await b.store.session("s1").searchMessages!(q, 20);
      for (let qi = 0; qi < qs.length; qi++) {
        const order = qi % 2 === 0 ? built.map((_, k) => k) : built.map((_, k) => built.length - 1 - k);
        for (const k of order) {
          const b = built[k]!;
          let t = performance.now();
          await b.store.session("s1").searchMessages!(qs[qi]!, 20);
          scoped[k]!.push(performance.now() - t);
          t = performance.now();
          await b.store.searchMessages(qs[qi]!, { limit: 20 });
          wide[k]!.push(performance.now() - t);
        }
      }
      const cells = (xs: number[][]) => xs.map((s) => `${ms(pct(s, 50))} / ${ms(pct(s, 99))}`).join(" | ");
      rows.push(`| ${words}-word search, session (n=${qs.length}) | ${cells(scoped)} |`);
      rows.push(`| ${words}-word search, store-wide (n=${qs.length}) | ${cells(wide)} |`);
    }
    // Appends: blocks of 50 per store, alternating, so both see the same load over time.
    const r = rng(11);
    const lat = built.map(() => [] as number[]);
    const busy = built.map(() => 0);
    for (let block = 0; block * 50 < appends; block++) {
      const order = block % 2 === 0 ? built.map((_, k) => k) : built.map((_, k) => built.length - 1 - k);
      for (const k of order) {
        const session = built[k]!.store.session("s1");
        for (let i = 0; i < 50; i++) {
          const text = makeText(r, WORDS);
          const t = performance.now();
          await session.appendMessage({
            id: `a${block}_${i}`,
            role: "user",
            parts: [{ type: "text", text }],
          });
          const d = performance.now() - t;
          lat[k]!.push(d);
          busy[k]! += d;
        }
      }
    }
    rows.push(
      `| append after the tip (n=${lat[0]!.length}): p50 / p99 / max, rate | ${lat.map((s, k) => `${ms(pct(s, 50))} / ${ms(pct(s, 99))} / ${ms(Math.max(...s))}, ${((s.length / busy[k]!) * 1000).toFixed(0)}/s`).join(" | ")} |`,
    );
    out.push(
      "Times in ms, p50 / p99 (limit 20; query bands common/mid/rare in turn; appends with synchronous_commit on).",
      "",
      `| operation | ${built.map((b) => b.name).join(" | ")} |`,
      `| --- | ${built.map(() => "---").join(" | ")} |`,
      ...rows,
      "",
    );
    return out.join("\n");
  } finally {
    if (!process.env.FOOTPRINT_KEEP) {
      for (const b of built) await client.query(`DROP SCHEMA IF EXISTS ${b.schema} CASCADE`);
    }
  }
}

/** Measures each size of FOOTPRINT_SIZES and returns the Markdown section. */
export async function benchPostgresFootprint(url = BENCH_PG_URL): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const [v] = (await client.query("SELECT current_setting('server_version') AS v")).rows as { v: string }[];
    const parts = [`## Postgres footprint (${v!.v})\n`];
    for (const n of sizes())
      parts.push(await one(client, n, Number(process.env.FOOTPRINT_APPENDS ?? "1000")));
    return parts.join("\n");
  } finally {
    await client.end();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await benchPostgresFootprint());
}
