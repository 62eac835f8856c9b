/**
 * How many source files a warm operation runs: V8's precise coverage counts the functions each call ran, reset
 * after warming up, so only the files of one warm append, history read and search are counted (SQLite :memory: and
 * PGlite), and which of them are encryption code. A measure of how far a reader follows one operation (issues #77
 * and #88: "files a warm append/search run").
 * Run: `node --import tsx scripts/warm-files.ts` (prints one table; `--list` names the files; `--functions=crypto`
 * names the functions run in the files whose path holds `crypto`).
 */
import { Session as Inspector } from "node:inspector/promises";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { PostgresStore } from "../src/postgres/store.js";
import { SqliteStore } from "../src/sqlite/store.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const list = process.argv.includes("--list");
const traced = process.argv.find((a) => a.startsWith("--functions="))?.slice("--functions=".length);
const functionsRun = new Map<string, string[]>();
const inspector = new Inspector();
inspector.connect();
await inspector.post("Profiler.enable");
await inspector.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });

/** The src files whose functions ran during `fn` (coverage taken before to reset the counters, and after). */
async function filesRun(name: string, fn: () => Promise<unknown>): Promise<string[]> {
  await inspector.post("Profiler.takePreciseCoverage");
  await fn();
  const { result } = await inspector.post("Profiler.takePreciseCoverage");
  if (traced !== undefined) {
    const run = result
      .filter((script) => script.url.includes(traced) && script.url.includes("/src/"))
      .flatMap((script) =>
        script.functions
          .filter((f) => f.ranges.some((r) => r.count > 0))
          .map((f) => `${relative(ROOT, fileURLToPath(script.url))} ${f.functionName || "(anonymous)"}`),
      );
    functionsRun.set(name, run);
  }
  return result
    .filter((script) => script.url.startsWith("file:") && script.url.includes("/src/"))
    .filter((script) => script.functions.some((f) => f.ranges.some((r) => r.count > 0)))
    .map((script) => relative(ROOT, fileURLToPath(script.url)))
    .filter((file) => !file.startsWith("src/testing/"))
    .sort();
}

type Store = SqliteStore | PostgresStore;
const message = (i: number) => ({
  id: `m${i}`,
  role: i % 2 ? "assistant" : "user",
  parts: [{ type: "text", text: `message ${i} about the harbour lights and the ferry timetable` }],
});

async function measure(name: string, store: Store): Promise<Record<string, string[]>> {
  const session = store.session("warm");
  // Warm: every statement prepared, every module loaded, caches filled.
  for (let i = 0; i < 40; i++) await session.appendMessage(message(i));
  for (let i = 0; i < 3; i++) {
    await session.getHistory();
    await store.searchMessages("harbour ferry", { limit: 5 });
  }
  let i = 40;
  const rows = {
    append: await filesRun(`${name} append`, () => session.appendMessage(message(i++))),
    history: await filesRun(`${name} history`, () => session.getHistory()),
    search: await filesRun(`${name} search`, () => store.searchMessages("harbour ferry", { limit: 5 })),
  };
  await store.close();
  return Object.fromEntries(Object.entries(rows).map(([k, v]) => [`${name} ${k}`, v]));
}

const results = {
  ...(await measure("SQLite", new SqliteStore(":memory:"))),
  ...(await measure("PGlite", new PostgresStore(await PGlite.create()))),
};
// Encryption code: src/store/crypto/ and each engine's keys (sealing.ts, key-cache.ts, key-snapshot.ts). The stores
// measured have no keyring: what of it runs is the guard against writing clear text for an owner with a key.
const encryption = (file: string) =>
  file.startsWith("src/store/crypto/") || /\/(sealing|key-cache|key-snapshot)\.ts$/.test(file);
console.log("| operation (no keyring) | src files run | of which encryption |\n| --- | --- | --- |");
for (const [name, files] of Object.entries(results)) {
  const keys = files.filter(encryption);
  console.log(`| ${name} | ${files.length} | ${keys.length}${keys.length ? ` (${keys.join(", ")})` : ""} |`);
}
if (list)
  for (const [name, files] of Object.entries(results)) console.log(`\n${name}:\n  ${files.join("\n  ")}`);
for (const [name, functions] of functionsRun)
  console.log(`\n${name} (${traced}):\n  ${functions.join("\n  ")}`);
inspector.disconnect();
