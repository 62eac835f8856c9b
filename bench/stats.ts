/** Timing, percentiles and Markdown formatting for the benchmark report. */

/** Summary of a sample of durations, all in microseconds. */
export interface Summary {
  n: number;
  mean: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
}

/** Returns the current time in microseconds from a monotonic high-resolution clock. */
export function nowUs(): number {
  return Number(process.hrtime.bigint()) / 1_000;
}

/** Runs `fn` once and returns how long it took, in microseconds. */
export async function timeUs(fn: () => unknown): Promise<number> {
  const t0 = nowUs();
  await fn();
  return nowUs() - t0;
}

/** Returns the p-th percentile (0–100) of an ascending array, nearest-rank method. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Summarises durations (µs): count, mean, p50, p99, min, max. */
export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length);
  return {
    n: sorted.length,
    mean,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** Formats a number with 3 significant digits and thousands separators (1,234 · 56.7 · 0.123). */
export function fmtNum(x: number): string {
  if (!Number.isFinite(x)) return "–";
  const abs = Math.abs(x);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

/** Formats a duration given in µs with a unit that keeps it readable (µs, ms or s). */
export function fmtDur(us: number): string {
  if (!Number.isFinite(us)) return "–";
  if (us < 1_000) return `${fmtNum(us)} µs`;
  if (us < 1_000_000) return `${fmtNum(us / 1_000)} ms`;
  return `${fmtNum(us / 1_000_000)} s`;
}

/** Formats operations per second from a mean duration in µs (e.g. "5.4k/s"). */
export function fmtRate(meanUs: number): string {
  const perSec = 1_000_000 / meanUs;
  return perSec >= 1_000 ? `${fmtNum(perSec / 1_000)}k/s` : `${fmtNum(perSec)}/s`;
}

/** Formats the ratio of a target's figure to the floor's ("1.23×"), or "–" when either is missing. */
export function fmtRatio(value: number | undefined, floor: number | undefined): string {
  if (value === undefined || floor === undefined || !(floor > 0) || !Number.isFinite(value)) return "–";
  return `${fmtNum(value / floor)}×`;
}

/** Renders a Markdown table; cells containing "|" are escaped. */
export function mdTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  const line = (cells: readonly string[]) => `| ${cells.map(esc).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** One table cell: its text and the figure compared with the floor's. */
export type Cell = { text: string; value?: number };

/** One table row: its label cells and a cell per target name. */
export type Row = { labels: string[]; cells: Map<string, Cell> };

/** Makes rows with the given labels and no cells yet. */
export function rows(labels: readonly (readonly string[])[]): Row[] {
  return labels.map((l) => ({ labels: [...l], cells: new Map<string, Cell>() }));
}

/** Renders a titled table: a column per target, and a "× floor" column after each non-floor target. */
export function renderTable(
  title: string,
  labelHeaders: readonly string[],
  body: readonly Row[],
  basis: string,
  names: readonly string[],
): string {
  const hasFloor = names.includes("floor");
  const header = [...labelHeaders];
  for (const n of names) header.push(n, ...(n !== "floor" && hasFloor ? [`${n} × floor`] : []));
  const lines = body.map((r) => {
    const cells = [...r.labels];
    const floor = r.cells.get("floor")?.value;
    for (const n of names) {
      const c = r.cells.get(n);
      cells.push(c?.text ?? "–");
      if (n !== "floor" && hasFloor) cells.push(fmtRatio(c?.value, floor));
    }
    return cells;
  });
  return `## ${title}\n\n${mdTable(header, lines)}${basis ? `\n\n_${basis}_` : ""}`;
}
