// A node:test reporter that prints, once the run is over, the top-level tests and suites that took longest, each with
// the file that declares it (a shared suite such as the storage contract is declared in src/testing/, so its name
// says which backend ran it), and the test files whose top-level tests took longest together. The CI log then says
// where the suite's time goes (scripts/test.mjs adds it beside the default reporter).
import { relative } from "node:path";

const SHOWN = 15;

/** The `SHOWN` largest entries of `rows`, longest first, as lines of seconds and a label. */
function table(title, rows) {
  const slowest = rows.sort((a, b) => b.ms - a.ms).slice(0, SHOWN);
  if (slowest.length === 0) return "";
  const lines = slowest.map(({ label, ms }) => `${(ms / 1000).toFixed(1).padStart(8)}  ${label}\n`);
  return `\nThe ${slowest.length} ${title} (seconds):\n${lines.join("")}`;
}

export default async function* slowestTests(source) {
  const tests = [];
  const byFile = new Map();
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { nesting, name, file, details } = event.data;
    if (nesting !== 0) continue;
    const ms = details?.duration_ms ?? 0;
    const where = file === undefined ? "" : relative(process.cwd(), file);
    tests.push({ label: where === "" ? name : `${name} (${where})`, ms });
    if (where !== "") byFile.set(where, (byFile.get(where) ?? 0) + ms);
  }
  yield table("slowest top-level tests and suites, where declared", tests);
  yield table(
    "files declaring the most top-level test time (a shared suite counts where declared)",
    [...byFile].map(([label, ms]) => ({ label, ms })),
  );
}
