/**
 * The workloads, written once against BenchTarget: append cost by session length, getHistory by
 * depth, latest leaf (cold / warm) and full-text search, plus building and caching the big store.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type BANDS,
  type BenchQuery,
  chainRows,
  makeMessage,
  rng,
  type StorePlan,
  type StoreRow,
  storeRows,
} from "./data.js";
import { nowUs, type Summary, summarize, timeUs } from "./stats.js";
import { type BenchTarget, OverBudget, type TargetFactory } from "./targets.js";

/** Deletes a SQLite file with its -wal / -shm / -journal companions and the cache marker. */
export function removeDbFiles(file: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal", ".meta.json"]) rmSync(file + suffix, { force: true });
}

/** Feeds rows to a target: its bulk path if it has one, else `append` row by row within the budget. */
export async function loadRows(t: BenchTarget, rows: Iterable<StoreRow>, budgetUs: number): Promise<void> {
  if (t.bulkLoad) return t.bulkLoad(rows);
  const t0 = nowUs();
  let n = 0;
  for (const r of rows) {
    await t.append(r.sessionId, r.message, r.parentId);
    if (++n % 1_000 === 0 && nowUs() - t0 > budgetUs * 5) {
      throw new OverBudget(
        `n/a (no bulkLoad; append-by-append build too slow: ${n} rows in ${budgetUs * 5e-6} s)`,
      );
    }
  }
}

/** A fresh file at `file` holding `rows` (written by a builder target, then closed), opened again for reading. */
export async function openLoaded(
  factory: TargetFactory,
  file: string,
  rows: Iterable<StoreRow>,
  budgetUs = Number.POSITIVE_INFINITY,
): Promise<BenchTarget> {
  removeDbFiles(file);
  const builder = factory();
  await builder.open(file);
  try {
    await loadRows(builder, rows, budgetUs);
  } finally {
    await builder.close();
  }
  const target = factory();
  await target.open(file);
  return target;
}

/** The big store's file and how it came to be. */
export interface StoreFile {
  file: string;
  cached: boolean;
  /** True when the target has no cacheVersion: the file is deleted at the end of the run. */
  temporary: boolean;
  buildUs: number;
  bytes: number;
}

/**
 * Makes sure the target's big store exists (closed) under `.bench-data/`, building it unless a
 * complete build with the same `cacheVersion` is there; targets without one build into `tmp` every run.
 */
export async function ensureStore(
  factory: TargetFactory,
  plan: StorePlan,
  dirs: { data: string; tmp: string },
  budgetUs: number,
): Promise<StoreFile> {
  const target = factory();
  const version = target.cacheVersion;
  const dir = version === undefined ? dirs.tmp : dirs.data;
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${target.name}-store-${plan.total}.db`);
  const meta = `${file}.meta.json`;
  let cached = false;
  let buildUs = 0;
  if (version !== undefined && existsSync(meta) && existsSync(file)) {
    const m = JSON.parse(readFileSync(meta, "utf8")) as { version?: string; buildUs?: number };
    cached = m.version === version;
    buildUs = m.buildUs ?? 0;
  }
  if (!cached) {
    removeDbFiles(file);
    const t0 = nowUs();
    await target.open(file);
    try {
      await loadRows(target, storeRows(plan), budgetUs);
    } finally {
      await target.close();
    }
    buildUs = nowUs() - t0;
    if (version !== undefined) writeFileSync(meta, JSON.stringify({ version, total: plan.total, buildUs }));
  }
  return { file, cached, temporary: version === undefined, buildUs, bytes: statSync(file).size };
}

/** Outcome of one append measurement. */
export interface AppendOutcome {
  stats?: Summary;
  note?: string;
}

/**
 * Times `window` appends to the session's leaf after 10–100 untimed ones; shrinks the window to fit
 * the budget, or reports n/a when even 20 appends would not fit.
 */
export async function measureAppends(
  t: BenchTarget,
  sessionId: string,
  budgetUs: number,
  window: number,
  seed: number,
): Promise<AppendOutcome> {
  const r = rng(seed);
  let k = 0;
  const timedAppend = () => {
    const m = makeMessage(r, `a${seed}-${k}`, k++ % 2 === 0 ? "user" : "assistant");
    return timeUs(() => t.append(sessionId, m));
  };
  const probe: number[] = [];
  for (let i = 0; i < 10; i++) probe.push(await timedAppend());
  const probeMean = summarize(probe).mean;
  // Up to 90 more untimed appends, when they fit in a tenth of the budget: past the transient after opening.
  const warm = Math.min(90, Math.floor(budgetUs / 10 / probeMean));
  for (let i = 0; i < warm; i++) await timedAppend();
  const n = Math.min(window, Math.floor(budgetUs / probeMean));
  if (n < 20) return { note: `n/a (too slow: ${(probeMean / 1000).toFixed(1)} ms per append)` };
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push(await timedAppend());
  return { stats: summarize(samples) };
}

/**
 * Builds one linear session of `length` messages in a fresh file (bulk path), closes and reopens it
 * (so no build transient such as a full WAL is measured), then measures appends to it.
 */
export async function appendWorkload(
  factory: TargetFactory,
  length: number,
  tmpDir: string,
  budgetUs: number,
  window: number,
): Promise<AppendOutcome> {
  mkdirSync(tmpDir, { recursive: true });
  const builder = factory();
  const file = join(tmpDir, `${builder.name}-append-${length}.db`);
  removeDbFiles(file);
  let t: BenchTarget | undefined;
  try {
    await builder.open(file);
    try {
      await loadRows(builder, chainRows("s1", length), budgetUs);
    } finally {
      await builder.close();
    }
    t = factory();
    await t.open(file);
    return await measureAppends(t, "s1", budgetUs, window, length);
  } finally {
    await t?.close();
    removeDbFiles(file);
  }
}

/** Measures appends to one session of a copy of the (closed) big store, so the cached store stays intact. */
export async function storeAppendWorkload(
  factory: TargetFactory,
  storeFile: string,
  sessionId: string,
  tmpDir: string,
  budgetUs: number,
  window: number,
): Promise<AppendOutcome> {
  mkdirSync(tmpDir, { recursive: true });
  const file = join(tmpDir, "store-copy.db");
  removeDbFiles(file);
  copyFileSync(storeFile, file);
  const t = factory();
  try {
    await t.open(file);
    return await measureAppends(t, sessionId, budgetUs, window, 1);
  } finally {
    await t.close();
    removeDbFiles(file);
  }
}

/** Outcome of timing getHistory on one chain session. */
export interface HistoryOutcome {
  stats: Summary;
  returned: number;
}

// Enough reps that one garbage collection landing in a read does not decide the median (100k-message reads
// allocate ~100 MB each).
const HISTORY_REPS: Record<number, number> = { 100: 100, 1000: 30, 10000: 15, 100000: 9 };

/** Times `history` of one linear session of `depth` messages: one untimed read, then up to 50 reps. */
export async function historyWorkload(
  t: BenchTarget,
  sessionId: string,
  depth: number,
  budgetUs: number,
): Promise<HistoryOutcome> {
  let first: unknown[] = [];
  let last = await timeUs(async () => {
    first = await t.history(sessionId);
  });
  const reps = HISTORY_REPS[depth] ?? 5;
  const samples: number[] = [];
  const t0 = nowUs();
  // Stop before a rep that would likely end past the budget (always at least one).
  for (let i = 0; i < reps && (i === 0 || nowUs() - t0 + last < budgetUs); i++) {
    last = await timeUs(() => t.history(sessionId));
    samples.push(last);
  }
  return { stats: summarize(samples), returned: first.length };
}

/** Times `latestLeaf` over `sessionIds`; warm = the same session's object already used once. */
export async function latestLeafWorkload(
  t: BenchTarget,
  sessionIds: readonly string[],
  cold: boolean,
  budgetUs: number,
): Promise<Summary> {
  const samples: number[] = [];
  const t0 = nowUs();
  for (const sid of sessionIds) {
    if (!cold) await t.latestLeaf(sid, false);
    samples.push(await timeUs(() => t.latestLeaf(sid, cold)));
    if (nowUs() - t0 > budgetUs) break;
  }
  return summarize(samples);
}

/** Search latencies per frequency band and over all queries, with the median hit count. */
export interface SearchOutcome {
  byBand: Map<keyof typeof BANDS | "all", Summary>;
  medianHits: Map<keyof typeof BANDS | "all", number>;
  ran: number;
  of: number;
}

/** Times the queries (after 5 untimed ones), scoped to each query's session or across all sessions. */
export async function searchWorkload(
  t: BenchTarget,
  queries: readonly BenchQuery[],
  scoped: boolean,
  budgetUs: number,
): Promise<SearchOutcome> {
  const run = (q: BenchQuery) => t.search(q.term, scoped ? q.sessionId : undefined);
  for (const q of queries.slice(0, 5)) await run(q);
  const times = new Map<keyof typeof BANDS | "all", number[]>();
  const hits = new Map<keyof typeof BANDS | "all", number[]>();
  const push = <K, V>(m: Map<K, V[]>, k: K, v: V) => {
    const a = m.get(k);
    if (a) a.push(v);
    else m.set(k, [v]);
  };
  const t0 = nowUs();
  let ran = 0;
  for (const q of queries) {
    let result: unknown[] = [];
    const us = await timeUs(async () => {
      result = await run(q);
    });
    for (const k of [q.band, "all"] as const) {
      push(times, k, us);
      push(hits, k, result.length);
    }
    ran++;
    if (nowUs() - t0 > budgetUs) break;
  }
  const byBand = new Map([...times].map(([k, v]) => [k, summarize(v)] as const));
  const medianHits = new Map([...hits].map(([k, v]) => [k, summarize(v).p50] as const));
  return { byBand, medianHits, ran, of: queries.length };
}
