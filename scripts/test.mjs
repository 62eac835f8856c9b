// Runs every test file under test/ with node:test through tsx. Node 20's `--test` does not expand globs, so the
// files are listed here; extra arguments (e.g. a file filter) are passed through.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "fixtures" ? [] : testFiles(path);
    return entry.name.endsWith(".test.ts") ? [relative(process.cwd(), path)] : [];
  });
}

const filters = process.argv.slice(2);
const files = testFiles("test")
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort();
if (files.length === 0) {
  console.error(`No test files match ${filters.join(", ")}`);
  process.exit(1);
}
const result = spawnSync(process.execPath, ["--import", "tsx", "--test", ...files], { stdio: "inherit" });
process.exit(result.status ?? 1);
