// Runs every test file under test/ with node:test through tsx. Node 20's `--test` does not expand globs, so the
// files are listed here; extra arguments (e.g. a file filter) are passed through.
//
// The CLI tests spawn the CLI ~150 times. Through tsx, every spawn transforms the sources again (~1 s of CPU
// each), so the CLI is bundled once here with esbuild (the transformer tsx itself uses) and those tests run the
// bundle (AGENT_SESSION_TEST_CLI; test/cli/helpers.ts). A test file run on its own spawns the sources through tsx.
//
// AGENT_SESSION_AI=6 runs them on the previous AI SDK major (test/helpers/ai-major.mjs), the default on Node < 22:
// in NODE_OPTIONS, so the processes the tests spawn resolve `ai` the same way.
//
// Test files run two at a time at least: node:test's default (one less than the cores) is one file at a time on a
// 2-core machine, while most files spend much of their time waiting on PostgreSQL, child processes and timers.
// Every file keeps to its own tables (schemas named by process id) and temporary files.
import { spawnSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "fixtures" ? [] : testFiles(path);
    return entry.name.endsWith(".test.ts") ? [relative(process.cwd(), path)] : [];
  });
}

// The files that take longest start first (with the runner's two at a time, one started late would run on alone at
// the end): the storage contract on the Citus cluster, minutes when .ci/run enables it.
const FIRST = ["test/citus-contract.test.ts"];
const filters = process.argv.slice(2);
const files = testFiles("test")
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort((a, b) => Number(FIRST.includes(b)) - Number(FIRST.includes(a)) || (a < b ? -1 : a > b ? 1 : 0));
// LangGraph's checkpoint conformance suite runs under vitest, its own runner (test/langgraph/vitest.config.ts): the
// *.vitest.ts files, after the node:test files, when no filter is given or a filter names one of them.
const vitestFiles = readdirSync(join("test", "langgraph"))
  .filter((name) => name.endsWith(".vitest.ts"))
  .map((name) => join("test", "langgraph", name))
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)));
if (files.length === 0 && vitestFiles.length === 0) {
  console.error(`No test files match ${filters.join(", ")}`);
  process.exit(1);
}

// Two folders below the root, as src/cli/main.ts is: the CLI finds package.json at ../../ from itself. A folder per
// run, so two runs at once (.ci/run runs one file beside the full runs) never rewrite each other's bundle.
const bundleDir = join(process.cwd(), ".test-build", `cli-${process.pid}`);
const cli = join(bundleDir, "main.mjs");
await build({
  entryPoints: ["src/cli/main.ts"],
  outfile: cli,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  // A map file beside the bundle, not inline: with --enable-source-maps (test/cli/helpers.ts) an inline map made
  // every spawn read and decode ~6 MB more, ~0.45 s of a ~0.75 s start on a busy 2-core machine.
  sourcemap: "linked",
  logLevel: "warning",
});

const env = { ...process.env, AGENT_SESSION_TEST_CLI: cli };
// AI SDK 7 declares Node >= 22: on an older Node the suite runs on AI SDK 6, the major an app there can install.
if (env.AGENT_SESSION_AI === undefined && Number(process.versions.node.split(".")[0]) < 22) {
  env.AGENT_SESSION_AI = "6";
  console.log(`Node ${process.version}: the AI SDK tests run on ai@6 (ai@7 needs Node >= 22)`);
}
if (env.AGENT_SESSION_AI !== undefined) {
  const hook = pathToFileURL(join(process.cwd(), "test", "helpers", "ai-major.mjs")).href;
  env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --import=${hook}`.trim();
}
const concurrency = `--test-concurrency=${Math.max(2, availableParallelism() - 1)}`;
// node:test's default reporter (spec on a terminal, TAP into a file or pipe, which .ci/run's log and its greps read),
// and after it the slowest top-level tests (test/helpers/slowest-tests.mjs).
const main = process.stdout.isTTY ? "spec" : "tap";
const reporters = [main, "./test/helpers/slowest-tests.mjs"].flatMap((reporter) => [
  `--test-reporter=${reporter}`,
  "--test-reporter-destination=stdout",
]);
const result =
  files.length === 0
    ? { status: 0 }
    : spawnSync(process.execPath, ["--import", "tsx", "--test", concurrency, ...reporters, ...files], {
        stdio: "inherit",
        env,
      });
rmSync(bundleDir, { recursive: true, force: true });

let vitestStatus = 0;
if (vitestFiles.length > 0) {
  const vitest = spawnSync(
    process.execPath,
    ["node_modules/vitest/vitest.mjs", "run", "--config", "test/langgraph/vitest.config.ts", ...vitestFiles],
    { stdio: "inherit", env },
  );
  vitestStatus = vitest.status ?? 1;
}
process.exit(result.status === 0 ? vitestStatus : (result.status ?? 1));
