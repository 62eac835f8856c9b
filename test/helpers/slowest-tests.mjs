// A node:test reporter that prints, once the run is over, the top-level tests and suites that took longest, each with
// the file that declares it (a shared suite such as the storage contract is declared in src/testing/, so its name
// says which backend ran it). The CI log then says where the suite's time goes (scripts/test.mjs adds it beside the
// default reporter).
import { relative } from "node:path";

const SHOWN = 15;

export default async function* slowestTests(source) {
  const tests = [];
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { nesting, name, file, details } = event.data;
    if (nesting !== 0) continue;
    tests.push({ name, file, ms: details?.duration_ms ?? 0 });
  }
  const slowest = tests.sort((a, b) => b.ms - a.ms).slice(0, SHOWN);
  if (slowest.length === 0) return;
  yield `\nThe ${slowest.length} slowest top-level tests and suites (seconds, where declared):\n`;
  for (const { name, file, ms } of slowest) {
    const where = file === undefined ? "" : ` (${relative(process.cwd(), file)})`;
    yield `${(ms / 1000).toFixed(1).padStart(8)}  ${name}${where}\n`;
  }
}
