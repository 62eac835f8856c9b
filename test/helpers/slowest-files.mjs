// A node:test reporter that prints, once the run is over, the test files that took longest: each file's top-level
// tests and suites summed (node:test reports no event for a file as a whole, so its imports are not counted). The
// CI log then says where the suite's time goes (scripts/test.mjs adds it beside the spec reporter).
import { relative } from "node:path";

const SHOWN = 15;

export default async function* slowestFiles(source) {
  const byFile = new Map();
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { nesting, file, details } = event.data;
    if (nesting !== 0 || file === undefined) continue;
    byFile.set(file, (byFile.get(file) ?? 0) + (details?.duration_ms ?? 0));
  }
  const slowest = [...byFile].sort((a, b) => b[1] - a[1]).slice(0, SHOWN);
  if (slowest.length === 0) return;
  yield `\nThe ${slowest.length} slowest test files (their top-level tests' time, in seconds):\n`;
  for (const [file, ms] of slowest)
    yield `${(ms / 1000).toFixed(1).padStart(8)}  ${relative(process.cwd(), file)}\n`;
}
