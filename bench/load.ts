/**
 * What a new process pays before its first answer (a CLI command, a serverless cold start): importing the built
 * package, opening a SQLite file and asking questions, each in a process of its own, RUNS times (default 4).
 * The store is the recall bench's: the LoCoMo conversations (BENCH_RECALL_DATA, default
 * ../shared/datasets/locomo-dev.json), one session each, one message per turn. Also times importing zod alone,
 * the largest dependency loaded with the package. `npm run bench:script bench/load.ts`; another Node:
 * `PATH=<node>/bin:$PATH npm run bench:script bench/load.ts`. NODE_COMPILE_CACHE reaches the children.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { SqliteStore } from "../src/sqlite/store.js";
import { type Conversation, LOCOMO_DATA, seedConversations } from "./locomo.js";
import { removeDbFiles } from "./workloads.js";

const runs = Number(process.env.RUNS ?? 4);
const data = JSON.parse(readFileSync(LOCOMO_DATA, "utf8")) as Conversation[];
const dir = fileURLToPath(new URL("../.bench-data/tmp/", import.meta.url));
mkdirSync(dir, { recursive: true });
const file = join(dir, `load-${process.pid}.db`);
const packageUrl = pathToFileURL(fileURLToPath(new URL("../dist/index.js", import.meta.url))).href;

const store = new SqliteStore(file);
const messages = await seedConversations(store, data);
// The index is brought up to date here, so the first question in a child measures a search, not indexing.
await store.searchMessages("warm");
await store.close();

const conv = data[0] as Conversation;
const questions = conv.qa.slice(0, 5).map((q) => q.question);
// The child: everything timed from its own start, so nothing of this process counts.
const child = `
const t0 = performance.now();
const { SqliteStore } = await import(${JSON.stringify(packageUrl)});
const t1 = performance.now();
const store = new SqliteStore(${JSON.stringify(file)});
const t2 = performance.now();
const asks = [];
for (const q of ${JSON.stringify(questions)}) {
  const a = performance.now();
  await store.searchMessages(q, { sessionId: ${JSON.stringify(conv.conv)}, limit: 20 });
  asks.push(performance.now() - a);
}
await store.close();
console.log(JSON.stringify({ load: t1 - t0, open: t2 - t1, asks }));`;
const zod = `const t0 = performance.now(); await import("zod"); console.log(JSON.stringify({ zod: performance.now() - t0 }));`;
const inChild = (code: string) =>
  JSON.parse(
    execFileSync(process.execPath, ["--input-type=module", "-e", code], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      encoding: "utf8",
    }),
  );

const rows: { load: number; open: number; asks: number[] }[] = [];
const zods: number[] = [];
try {
  for (let r = 0; r < runs; r++) {
    rows.push(inChild(child));
    zods.push(inChild(zod).zod);
  }
} finally {
  removeDbFiles(file);
}
const range = (values: number[], digits = 0) =>
  `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)} ms`;
console.log(`Node ${process.version}, ${messages} messages, ${runs} new processes`);
console.log(`import the package  ${range(rows.map((r) => r.load))} (zod alone: ${range(zods)})`);
console.log(`open the file       ${range(rows.map((r) => r.open))}`);
console.log(
  `first question      ${range(
    rows.map((r) => r.asks[0] ?? 0),
    1,
  )}`,
);
console.log(
  `next four           ${range(
    rows.flatMap((r) => r.asks.slice(1)),
    1,
  )}`,
);
