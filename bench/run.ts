/**
 * `npm run bench`: measures the floor, the reference and agent-session side by side on the same
 * data and SQLite settings, prints one Markdown table per workload and writes bench/results/latest.md.
 * Env: BENCH_SCALE (store size as a fraction of 1M messages, default 1), BENCH_ONLY
 * (append,history,leaf,search,everyday,compaction,media,postgres,large,stream,recall; recall = LoCoMo, see recall.ts; everyday = one 1k/10k/100k session, see everyday.ts;
 * footprint = Postgres sizes per relation, only when named: it loads 2 × 110,000 messages, see postgres-footprint.ts;
 * citus = a Citus cluster against one server, only when named: it seeds 2 × 100,000 messages, see citus.ts), BENCH_TARGETS (floor,reference,agent-session), BENCH_BUDGET_S
 * (time budget per measurement, default 60), BENCH_APPEND_LENGTHS (default 100,10000,100000 capped
 * at the store size), BENCH_APPEND_WINDOW (timed appends per length, default 500),
 * BENCH_REF_AUTOCOMMIT=1 (reference appends without a wrapping transaction), BENCH_SEARCH_MATCH=all (agent-session
 * searches every word instead of ranked recall, the default).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { benchCitus } from "./citus.js";
import { benchCompaction } from "./compaction.js";
import { benchContextSealing } from "./context-sealing.js";
import { HISTORY_DEPTHS, makeQueries, planStore, rng } from "./data.js";
import { benchEncryption } from "./encryption.js";
import { benchErasure } from "./erasure.js";
import { benchEveryday } from "./everyday.js";
import { indexSizes } from "./index-size.js";
import { benchLargeMessages } from "./large.js";
import { benchMedia } from "./media.js";
import { benchPostgres } from "./postgres.js";
import { benchPostgresFootprint } from "./postgres-footprint.js";
import { benchRecall } from "./recall.js";
import { type Cell, fmtDur, fmtNum, fmtRate, type Row, renderTable, rows, type Summary } from "./stats.js";
import { benchStream } from "./stream.js";
import { type BenchTarget, loadTarget, OverBudget, TARGET_MODULES, type TargetFactory } from "./targets.js";
import {
  type AppendOutcome,
  appendWorkload,
  ensureStore,
  historyWorkload,
  latestLeafWorkload,
  searchWorkload,
  storeAppendWorkload,
} from "./workloads.js";

const WORKLOADS = [
  "append",
  "history",
  "leaf",
  "search",
  "everyday",
  "compaction",
  "media",
  "postgres",
  "large",
  "stream",
  "footprint",
  "recall",
  "erasure",
  "encryption",
  "citus",
] as const;
const list = (v: string | undefined) =>
  (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
const scale = Number(process.env.BENCH_SCALE ?? "1");
if (!(scale > 0)) throw new Error(`BENCH_SCALE must be a positive number, got ${process.env.BENCH_SCALE}`);
const only = new Set(list(process.env.BENCH_ONLY).map((w) => (w.startsWith("latest") ? "leaf" : w)));
for (const w of only) {
  if (!(WORKLOADS as readonly string[]).includes(w)) throw new Error(`BENCH_ONLY: unknown workload ${w}`);
}
// The footprint and Citus benches load minutes of data: they run only when named.
const wanted = (w: (typeof WORKLOADS)[number]) =>
  only.has(w) || (only.size === 0 && w !== "footprint" && w !== "citus");
const targetNames = list(process.env.BENCH_TARGETS).length
  ? list(process.env.BENCH_TARGETS)
  : Object.keys(TARGET_MODULES);
const budgetUs = Number(process.env.BENCH_BUDGET_S ?? "60") * 1e6;
const plan = planStore(scale);
const appendLengths = list(process.env.BENCH_APPEND_LENGTHS).length
  ? list(process.env.BENCH_APPEND_LENGTHS).map(Number)
  : [100, 10_000, 100_000].filter((n) => n <= plan.total);
const appendWindow = Number(process.env.BENCH_APPEND_WINDOW ?? "500");
const dirs = {
  data: fileURLToPath(new URL("../.bench-data/", import.meta.url)),
  tmp: fileURLToPath(new URL("../.bench-data/tmp/", import.meta.url)),
};
const resultsFile = fileURLToPath(new URL("./results/latest.md", import.meta.url));

const progress = (msg: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const errText = (e: unknown) => (e instanceof Error ? e.message : String(e)).split("\n")[0]!;
const lat = (s: Summary) => `${fmtDur(s.p50)} / ${fmtDur(s.p99)}`;

/** Runs one measurement for one cell; an exception becomes the cell's text instead of a crash. */
async function measure(name: string, what: string, fn: () => Promise<Cell>): Promise<Cell> {
  progress(`${name}: ${what}`);
  try {
    return await fn();
  } catch (e) {
    progress(`${name}: ${what}: ${errText(e)}`);
    return { text: e instanceof OverBudget ? errText(e) : `error: ${errText(e)}` };
  }
}

function appendCell(o: AppendOutcome): Cell {
  const s = o.stats;
  if (!s) return { text: o.note ?? "n/a" };
  return {
    text: `${fmtDur(s.mean)} / ${fmtDur(s.p50)} / ${fmtDur(s.p99)} (${fmtRate(s.mean)}, n=${s.n})`,
    value: s.mean,
  };
}

// ── the rows of every table ──────────────────────────────────────────────────────────────────
const appendRows = rows(appendLengths.map((n) => [fmtNum(n)]));
const storeAppendSid = plan.typical[0]!;
const storeAppendSize = plan.sessions.find((s) => s.id === storeAppendSid)?.size ?? 0;
const storeAppendRow = rows([[`${fmtNum(storeAppendSize)}, in the ${fmtNum(plan.total)}-message store`]])[0]!;
const growthRow = rows([["growth, largest ÷ smallest length"]])[0]!;
const buildRow = rows([["build"]])[0]!;
const depths = HISTORY_DEPTHS.map((d) => ({ d, sid: plan.chains.get(d) }));
const historyRows = rows(depths.map(({ d }) => [fmtNum(d)]));
const deepest = Math.max(...plan.chains.keys());
const deepSid = plan.chains.get(deepest)!;
const r = rng(3);
const typicalPick = Array.from({ length: 300 }, () => plan.typical[Math.floor(r() * plan.typical.length)]!);
const leafCases = [
  { label: "typical session, cold", ids: typicalPick.slice(0, 50), cold: true },
  { label: "typical session, warm", ids: typicalPick, cold: false },
  { label: `${fmtNum(deepest)}-message session, cold`, ids: Array<string>(20).fill(deepSid), cold: true },
  { label: `${fmtNum(deepest)}-message session, warm`, ids: Array<string>(100).fill(deepSid), cold: false },
];
const leafRows = rows(leafCases.map((c) => [c.label]));
const queries = makeQueries(200, plan.typical);
const bands = ["common", "mid", "rare", "all"] as const;
const scopes = [
  { label: "one session", scoped: true },
  { label: "all sessions", scoped: false },
];
const searchRows = rows(scopes.flatMap((s) => bands.map((b) => [s.label, b])));

async function appendLengthsFor(name: string, factory: TargetFactory): Promise<void> {
  const measured: [number, Summary][] = [];
  for (const [i, n] of appendLengths.entries()) {
    const c = await measure(name, `append at session length ${n}`, async () => {
      const o = await appendWorkload(factory, n, dirs.tmp, budgetUs, appendWindow);
      if (o.stats) measured.push([n, o.stats]);
      return appendCell(o);
    });
    appendRows[i]!.cells.set(name, c);
  }
  const [first, last] = [measured[0], measured[measured.length - 1]];
  if (first && last && measured.length > 1) {
    const mean = fmtNum(last[1].mean / first[1].mean);
    const p50 = fmtNum(last[1].p50 / first[1].p50);
    growthRow.cells.set(name, {
      text: `mean ${mean}×, p50 ${p50}× (${fmtNum(first[0])} → ${fmtNum(last[0])})`,
    });
  }
}

async function readWorkloads(name: string, st: BenchTarget): Promise<void> {
  if (wanted("history")) {
    for (const [i, { d, sid }] of depths.entries()) {
      if (sid === undefined) {
        historyRows[i]!.cells.set(name, { text: `skipped (store too small at BENCH_SCALE=${scale})` });
        continue;
      }
      const c = await measure(name, `history at depth ${d}`, async () => {
        const o = await historyWorkload(st, sid, d, budgetUs);
        const per = o.returned > 0 ? `, ${fmtNum(o.stats.p50 / o.returned)} µs/msg` : "";
        return {
          text: `${fmtDur(o.stats.p50)} (${fmtNum(o.returned)} msgs${per}, n=${o.stats.n})`,
          value: o.stats.p50,
        };
      });
      historyRows[i]!.cells.set(name, c);
    }
  }
  if (wanted("leaf")) {
    for (const [i, lc] of leafCases.entries()) {
      const c = await measure(name, `latest leaf, ${lc.label}`, async () => {
        const s = await latestLeafWorkload(st, lc.ids, lc.cold, budgetUs);
        return { text: `${lat(s)} (n=${s.n})`, value: s.p50 };
      });
      leafRows[i]!.cells.set(name, c);
    }
  }
  if (!wanted("search")) return;
  for (const [j, scope] of scopes.entries()) {
    const cells = new Map<string, Cell>();
    const c = await measure(name, `search, ${scope.label}`, async () => {
      const o = await searchWorkload(st, queries, scope.scoped, budgetUs);
      const partial = o.ran < o.of ? `; ${o.ran} of ${o.of} queries ran within the budget` : "";
      for (const b of bands) {
        const s = o.byBand.get(b);
        const hits = fmtNum(o.medianHits.get(b) ?? 0);
        if (s) cells.set(b, { text: `${lat(s)} (hits ${hits}, n=${s.n}${partial})`, value: s.p50 });
      }
      return { text: "–" };
    });
    for (const [k, b] of bands.entries())
      searchRows[j * bands.length + k]!.cells.set(name, cells.get(b) ?? c);
  }
}

async function storeWorkloads(name: string, factory: TargetFactory): Promise<void> {
  let file: string | undefined;
  let temporary = false;
  const build = await measure(name, `${fmtNum(plan.total)}-message store (built unless cached)`, async () => {
    const s = await ensureStore(factory, plan, dirs, budgetUs);
    ({ file, temporary } = s);
    const how = s.cached ? "cached, built in" : "built in";
    return { text: `${how} ${fmtDur(s.buildUs)}, ${fmtNum(s.bytes / 2 ** 20)} MiB`, value: s.buildUs };
  });
  buildRow.cells.set(name, build);
  if (file === undefined) {
    for (const row of [storeAppendRow, ...historyRows, ...leafRows, ...searchRows])
      row.cells.set(name, build);
    return;
  }
  const storeFile = file;
  if (wanted("append")) {
    const c = await measure(name, `append into ${storeAppendSid} of a copy of the store`, async () =>
      appendCell(
        await storeAppendWorkload(factory, storeFile, storeAppendSid, dirs.tmp, budgetUs, appendWindow),
      ),
    );
    storeAppendRow.cells.set(name, c);
  }
  if (wanted("history") || wanted("leaf") || wanted("search")) {
    const st = factory();
    await st.open(storeFile);
    try {
      await readWorkloads(name, st);
    } finally {
      await st.close();
    }
  }
  if (temporary) rmSync(dirs.tmp, { recursive: true, force: true });
}

const NOTES = `## Method

- Same data for every target (seeded): 75-word Zipf(s=1) English-like messages, ~500 B JSON. Big store: sessions
  interleaved ~50 at a time, linear chains of the history depths, the rest ~900-message sessions with 3 % forks.
- **floor**: hand-written better-sqlite3 — per append one \`BEGIN IMMEDIATE\` (head read, message row, contentless FTS5
  row \`unicode61 remove_diacritics 2\`, session row); history = recursive CTE carrying content, reversed in JS +
  \`JSON.parse\`; latest leaf = \`sessions.leaf_id\` joined to its row (cold = statement prepared anew); search =
  bm25, \`sid\` token to scope.
- **reference**: agents@0.22.0 \`Session\` over \`AgentSessionProvider\` through a DO-style \`sql\` tagged template on
  better-sqlite3; each append wrapped in one \`BEGIN IMMEDIATE\` transaction; warm Session objects primed with the
  leaf id the provider caches after its own appends; cold = a new object (O(n²) anti-join, refused above the budget).
  Its FTS uses \`porter unicode61\`; getHistory stops at 10,001 messages (its depth guard); scoped search =
  \`Session.search\` (query as one phrase), unscoped = \`SessionManager.search\`.
- Stores are bulk-loaded, FTS optimized, then read warm (OS cache). Append rows by length use a fresh file holding
  only that session; the store row appends to a copy of the big store. One transaction per append, synchronous=NORMAL.
- Append means are set by rare multi-ms FTS merges and WAL checkpoints: on a shared VM they vary up to 2–3× between
  runs (p50 ±20 %); use BENCH_APPEND_WINDOW=2000 for steadier means. p99 over ~67 queries is about the maximum.`;

async function main(): Promise<void> {
  const out: string[] = [];
  const emit = (s: string) => {
    console.log(s);
    out.push(s);
  };
  const sqlite = (
    new (loadBetterSqlite3())(":memory:").prepare("SELECT sqlite_version() AS v").get() as { v: string }
  ).v;
  emit("# agent-session storage benchmark\n");
  emit(`- ${new Date().toISOString()}; Node ${process.version}; SQLite ${sqlite} (better-sqlite3)`);
  emit(`- machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}`);
  emit(`- BENCH_SCALE=${scale}: ${fmtNum(plan.total)} messages; budget ${budgetUs / 1e6} s per measurement`);
  emit(
    `- workloads: ${only.size ? [...only].join(", ") : "all"}; append lengths: ${appendLengths.join(", ")}`,
  );
  const targets: { name: string; factory: TargetFactory }[] = [];
  for (const name of targetNames) {
    const loaded = await loadTarget(name);
    if ("factory" in loaded) targets.push({ name, factory: loaded.factory });
    else emit(`- target **${name}**: skipped (${loaded.error})`);
  }
  emit(`- targets measured: ${targets.map((t) => t.name).join(", ") || "none"}`);
  const bigStore = ["append", "history", "leaf", "search"] as const;
  for (const t of targets) {
    if (wanted("append")) await appendLengthsFor(t.name, t.factory);
    if (bigStore.some(wanted)) await storeWorkloads(t.name, t.factory);
  }
  const names = targets.map((t) => t.name);
  const table = (title: string, labels: string[], body: Row[], basis: string) =>
    emit(`\n${renderTable(title, labels, body, basis, names)}`);
  if (wanted("append")) {
    table(
      "Append: cost per append by session length (mean / p50 / p99, appends/s)",
      ["session length"],
      [...appendRows, storeAppendRow, growthRow],
      "Ratio to floor on the mean. One transaction per append.",
    );
  }
  if (bigStore.some(wanted))
    table(
      `Store: ${fmtNum(plan.total)} messages, ${fmtNum(plan.sessions.length)} sessions`,
      [""],
      [buildRow],
      "",
    );
  if (wanted("history"))
    table("getHistory, linear session in the store (p50)", ["depth"], historyRows, "Ratio on p50.");
  if (wanted("leaf")) table("Latest leaf (p50 / p99)", ["case"], leafRows, "Ratio on p50.");
  if (wanted("search")) {
    table(
      "Search, 1-term queries, ≤ 20 ranked hits (p50 / p99)",
      ["scope", "term band"],
      searchRows,
      "Ratio on p50.",
    );
  }
  if (wanted("search")) {
    const stores = [
      {
        name: "floor",
        fts: "messages_fts",
        text: "SELECT SUM(length(CAST(json_extract(content, '$.parts[0].text') AS BLOB))) AS bytes FROM messages",
      },
      {
        name: "agent-session",
        fts: "agent_messages_fts",
        text: "SELECT SUM(length(CAST(json_extract(content, '$.parts[0].text') AS BLOB))) AS bytes FROM agent_messages",
      },
    ]
      .filter((s) => names.includes(s.name))
      .map((s) => ({ ...s, file: `${dirs.data}${s.name}-store-${plan.total}.db` }));
    if (stores.length > 0) emit(`\n${indexSizes(stores)}`);
  }
  if (wanted("everyday")) emit(`\n${await benchEveryday(targets, dirs.tmp, budgetUs, progress)}`);
  if (wanted("recall")) emit(await benchRecall(progress));
  if (wanted("compaction")) {
    progress("compaction: append with compactAfter armed");
    emit(`\n${await benchCompaction(scale, budgetUs)}`);
  }
  if (wanted("media")) {
    progress("media: the same 1 MB image in 100 messages");
    emit(`\n${await benchMedia()}`);
  }
  if (wanted("postgres")) {
    progress("postgres: append, history and search against SELECT 1");
    try {
      emit(`\n${await benchPostgres(scale)}`);
    } catch (error) {
      emit(`\n## PostgreSQL\n\nskipped: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (wanted("footprint")) {
    progress("footprint: Postgres relation and index sizes, v7 and v8 side by side");
    try {
      emit(`\n${await benchPostgresFootprint()}`);
    } catch (error) {
      emit(`\n## Postgres footprint\n\nskipped: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (wanted("erasure")) {
    progress("erasure: erase an owner's sessions on SQLite and Postgres");
    emit(`\n${await benchErasure(scale)}`);
  }
  if (wanted("encryption")) {
    progress("encryption: sealed against clear appends and searches on SQLite and Postgres");
    emit(`\n${await benchEncryption(scale)}`);
    emit(`\n${await benchContextSealing(scale)}`);
  }
  if (wanted("citus")) {
    progress("citus: appends and searches on a Citus cluster against one PostgreSQL server");
    emit(`\n${await benchCitus(scale)}`);
  }
  if (wanted("large")) {
    progress("large: a 20 MB tool output round trip on every backend");
    emit(`\n${await benchLargeMessages()}`);
  }
  if (wanted("stream")) {
    progress("stream: streaming history vs getHistory, peak RSS at 10k and 100k messages (child processes)");
    emit(`\n${await benchStream()}`);
  }
  emit(`\n${NOTES}`);
  mkdirSync(fileURLToPath(new URL("./results/", import.meta.url)), { recursive: true });
  writeFileSync(resultsFile, `${out.join("\n")}\n`);
  progress(`written ${resultsFile}`);
}

await main();
