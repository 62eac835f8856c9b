/**
 * Append cost with automatic compaction armed (`compactAfter` set, threshold never reached so every append only
 * decides): agent-session keeps running token totals, the reference re-reads and re-estimates the history on every
 * append. Standalone: `npm run bench:script bench/compaction.ts` (BENCH_SCALE shrinks the lengths).
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Session } from "../src/session/session.js";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { appendRow } from "../src/sqlite/append.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { chainRows, makeMessage, rng } from "./data.js";
import { load as loadReference, SqlAdapter } from "./reference.js";
import { fmtDur, fmtRatio, mdTable, nowUs, summarize } from "./stats.js";

const Database = loadBetterSqlite3();

const NEVER = 1e12;
const neverCompact = async () => null;

function freshFile(name: string): string {
  const file = join(tmpdir(), `agent-session-bench-${process.pid}-${name}.db`);
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
  return file;
}

// Times `count` appends after up to 10 untimed ones, within a tenth of the budget (the first appends of a fresh
// Session prepare statements and warm the JIT).
const WARM_UP = 10;

async function timeAppends(count: number, append: (i: number) => Promise<void>, budgetUs: number) {
  const warmStart = nowUs();
  for (let i = 0; i < WARM_UP && nowUs() - warmStart < budgetUs / 10; i++) await append(count + i);
  const samples: number[] = [];
  const start = nowUs();
  for (let i = 0; i < count && nowUs() - start < budgetUs; i++) {
    const t = nowUs();
    await append(i);
    samples.push(nowUs() - t);
  }
  return summarize(samples);
}

async function ours(length: number, window: number, budgetUs: number) {
  const file = freshFile(`ours-${length}`);
  const store = new SqliteStore(file);
  store.driver.transaction(() => {
    for (const row of chainRows("s1", length))
      appendRow(store.driver, row.sessionId, row.message, { parentId: row.parentId });
  });
  const session = Session.create(store).forSession("s1").onCompaction(neverCompact).compactAfter(NEVER);
  const next = rng(7);
  const result = await timeAppends(
    window,
    (i) => session.appendMessage(makeMessage(next, `x${i}`, "user")).then(() => {}),
    budgetUs,
  );
  await store.close();
  rmSync(file, { force: true });
  return result;
}

async function reference(length: number, window: number, budgetUs: number) {
  const mod = (await import(
    "agents/experimental/memory/session"
  )) as typeof import("agents/experimental/memory/session");
  const file = freshFile(`ref-${length}`);
  // The prefix is written with the harness's bulk path (the reference's own rows, as its appends leave them):
  // appending 100k messages through the reference itself takes hours, since its append cost grows with length.
  const target = (await loadReference())();
  target.open(file);
  await target.bulkLoad?.(chainRows("s1", length));
  await target.close();
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  const agent = new SqlAdapter(db);
  const provider = new mod.AgentSessionProvider(agent, "s1");
  // Prime the provider's leaf cache as its own appends would have (its cold look-up is O(n²): hours at 100k).
  const newest = db.prepare(
    "SELECT id FROM assistant_messages WHERE session_id = ? ORDER BY rowid DESC LIMIT 1",
  );
  const leaf = (newest.get("s1") as { id: string } | undefined)?.id;
  if (leaf !== undefined) (provider as unknown as { activeLeafId?: string }).activeLeafId = leaf;
  const session = mod.Session.create(provider).onCompaction(neverCompact).compactAfter(NEVER);
  const next = rng(7);
  const result = await timeAppends(
    window,
    async (i) => {
      db.exec("BEGIN IMMEDIATE");
      await session.appendMessage(makeMessage(next, `x${i}`, "user"));
      db.exec("COMMIT");
    },
    budgetUs,
  );
  db.close();
  rmSync(file, { force: true });
  return result;
}

/** Measures append cost with compaction armed at several session lengths and returns a Markdown section. */
export async function benchCompaction(scale = 1, budgetUs = 60e6): Promise<string> {
  const lengths = [100, 10_000, 100_000].map((n) => Math.max(100, Math.round(n * Math.min(1, scale * 10))));
  const body: string[][] = [];
  const cell = (s: ReturnType<typeof summarize>) => `${fmtDur(s.mean)} / ${fmtDur(s.p50)} (n=${s.n})`;
  let first: { ours: number; ref: number } | undefined;
  for (const length of [...new Set(lengths)]) {
    const a = await ours(length, 300, budgetUs);
    const r = await reference(length, 300, Math.min(budgetUs, 30e6));
    first ??= { ours: a.p50, ref: r.p50 };
    body.push([
      length.toLocaleString("en-US"),
      cell(a),
      cell(r),
      fmtRatio(r.mean, a.mean),
      `${(a.p50 / first.ours).toFixed(2)}× / ${(r.p50 / first.ref).toFixed(2)}×`,
    ]);
  }
  return [
    "## Append with compactAfter armed (mean / p50)",
    "",
    mdTable(
      [
        "session length",
        "agent-session",
        "reference",
        "reference × agent-session",
        "p50 growth vs shortest (ours / reference)",
      ],
      body,
    ),
    "",
    "_The threshold is never reached, so every append only decides. agent-session reads running totals (a few row reads); the reference reads and re-estimates the whole path (capped at 10,001 rows by its depth guard)._",
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await benchCompaction(Number(process.env.BENCH_SCALE ?? "1")));
}
