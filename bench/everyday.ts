/**
 * Everyday sizes: one session alone in its file (1k / 10k / 100k messages, what most users have), searched with
 * one- and two-word queries of every frequency band and appended to, for every target side by side. Queries are
 * interleaved between the targets (each query runs on every target before the next one), so load on a shared
 * machine falls on all of them alike. Env: BENCH_EVERYDAY_SIZES (default 1000,10000,100000).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { bandQueries, chainRows } from "./data.js";
import { fmtDur, fmtNum, mdTable, nowUs, type Summary, summarize } from "./stats.js";
import type { BenchTarget, TargetFactory } from "./targets.js";
import { measureAppends, openLoaded, removeDbFiles } from "./workloads.js";

const QUERIES = 150;

function sizes(): number[] {
  const raw = process.env.BENCH_EVERYDAY_SIZES ?? "1000,10000,100000";
  return raw
    .split(",")
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}

const cell = (s: Summary | undefined) => (s ? `${fmtDur(s.p50)} / ${fmtDur(s.p99)}` : "–");

/** Runs the everyday workload for the given targets and returns its Markdown section. */
export async function benchEveryday(
  targets: readonly { name: string; factory: TargetFactory }[],
  tmpDir: string,
  budgetUs: number,
  progress: (msg: string) => void,
): Promise<string> {
  mkdirSync(tmpDir, { recursive: true });
  const names = targets.map((t) => t.name);
  const searchRows: string[][] = [];
  const appendRows: string[][] = [];
  for (const size of sizes()) {
    const open: BenchTarget[] = [];
    const files: string[] = [];
    try {
      for (const t of targets) {
        progress(`everyday: ${t.name}, one ${fmtNum(size)}-message session`);
        const file = join(tmpDir, `${t.name}-everyday-${size}.db`);
        files.push(file);
        open.push(await openLoaded(t.factory, file, chainRows("s1", size), budgetUs));
      }
      for (const words of [1, 2]) {
        const qs = bandQueries(QUERIES, words, 17 + words);
        const samples = open.map(() => [] as number[]);
        for (const q of qs.slice(0, 5)) for (const t of open) await t.search(q, "s1");
        for (const q of qs) {
          for (const [i, t] of open.entries()) {
            const t0 = nowUs();
            await t.search(q, "s1");
            samples[i]!.push(nowUs() - t0);
          }
        }
        searchRows.push([fmtNum(size), `${words}`, ...samples.map((s) => cell(summarize(s)))]);
      }
      const appends: string[] = [];
      for (const t of open) {
        const o = await measureAppends(t, "s1", budgetUs, 1000, size);
        const s = o.stats;
        appends.push(
          s
            ? `${fmtDur(s.mean)} / ${fmtDur(s.p50)} / ${fmtDur(s.p99)} (mean ÷ p50 ${fmtNum(s.mean / s.p50)})`
            : (o.note ?? "–"),
        );
      }
      appendRows.push([fmtNum(size), ...appends]);
    } finally {
      for (const t of open) await t.close();
      for (const f of files) removeDbFiles(f);
    }
  }
  return [
    "## Everyday sizes: one session alone in its file",
    "",
    `Search inside the session, ≤ 20 ranked hits (p50 / p99 over ${QUERIES} queries, the bands in turn, interleaved across targets):`,
    "",
    mdTable(["messages", "words", ...names], searchRows),
    "",
    "Append of ~500-byte text messages to that session, indexing included (mean / p50 / p99, 1,000 appends):",
    "",
    mdTable(["messages", ...names], appendRows),
  ].join("\n");
}
