/**
 * How long RedisSessionStorage blocks the Redis server for a large session: saves and loads a session of
 * AGENT_BENCH_MB megabytes (default 40: 2,000 messages, one in ten a ~150 KB base64 image, the rest ~1 KB text)
 * while a second client (on its own thread) sends PING every 5 ms, and prints one JSON line with the longest PING round trip during
 * save and load (what every other client of that Redis waited at most), the longest command of the storage in the
 * server's SLOWLOG (threshold set to 1 ms for the run, then restored) and the save/load wall times.
 * `AGENT_BENCH_SRC` points at another checkout's `src` to measure an older version the same way.
 * Usage: npm run bench:script bench/agent-redis-block.ts [redis-url]
 */
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { Redis } from "ioredis";

const url = process.argv[2] ?? "redis://127.0.0.1:6379";
const megabytes = Number(process.env.AGENT_BENCH_MB ?? "40");
const src = resolve(process.env.AGENT_BENCH_SRC ?? join(import.meta.dirname, "..", "src"));
const agent = await import(pathToFileURL(join(src, "agent", "index.ts")).href);

const count = 2000;
const imageBytes = Math.round((megabytes * 1e6 - count * 1000) / (count / 10));
const image = Buffer.alloc(Math.max(0, Math.round((imageBytes * 3) / 4)), 7).toString("base64");
const text = "lorem ipsum dolor sit amet ".repeat(37); // ~1 KB
const now = Date.now();
const messages = Array.from({ length: count }, (_, i) =>
  i % 10 === 9
    ? { id: `m${i}`, role: "user", content: [{ type: "image", image }], createdAt: now }
    : { id: `m${i}`, role: "assistant", content: `${i} ${text}`, createdAt: now },
);
const entries = Array.from({ length: count / 2 }, (_, i) => ({
  model: "m",
  inputTokens: i,
  outputTokens: 1,
  cost: null,
  createdAt: now,
}));
const state = {
  id: `bench-${process.pid}-${now}`,
  messages,
  usage: { entries },
  metadata: { title: "bench" },
  createdAt: now,
  updatedAt: now,
};

const prefix = `agent-bench:${process.pid}:`;
const storage = new agent.RedisSessionStorage(url, { prefix });
// The pinger runs on its own thread: this thread's JSON work must not count as the server's.
const pinger = new Worker(
  `const { parentPort, workerData } = require("node:worker_threads");
const { Redis } = require("ioredis");
const redis = new Redis(workerData);
let max = 0, running = false;
async function loop() {
  while (running) {
    const start = performance.now();
    await redis.ping();
    max = Math.max(max, performance.now() - start);
    await new Promise((done) => setTimeout(done, 5));
  }
}
parentPort.on("message", async (command) => {
  if (command === "start") { max = 0; running = true; loop(); parentPort.postMessage("started"); }
  else if (command === "stop") { running = false; parentPort.postMessage(max); }
  else { await redis.quit(); parentPort.close(); }
});`,
  { eval: true, workerData: url },
);
const ask = (command: string) =>
  new Promise<unknown>((done) => {
    pinger.once("message", done);
    pinger.postMessage(command);
  });

// The server's own account too: SLOWLOG entries over 1 ms (settings restored at the end), longest per phase.
const admin = new Redis(url);
const saved = (await admin.config("GET", "slowlog-*")) as string[];
await admin.config("SET", "slowlog-log-slower-than", "1000");
await admin.config("SET", "slowlog-max-len", "4096");
const lastId = async () => ((await admin.slowlog("GET", 1)) as [number][])[0]?.[0] ?? -1;

/** Runs `work` while the pinger PINGs every 5 ms: its wall time, the longest PING and the longest command. */
async function measure(
  work: () => Promise<unknown>,
): Promise<{ ms: number; maxPingMs: number; maxCommandMs: number }> {
  const since = await lastId();
  await ask("start");
  await new Promise((done) => setTimeout(done, 50));
  const start = performance.now();
  await work();
  const ms = performance.now() - start;
  const maxPing = (await ask("stop")) as number;
  const log = (await admin.slowlog("GET", 4096)) as [number, number, number, string[]][];
  const ours = log.filter(([id, , , args]) => id > since && args.some((arg) => arg.startsWith(prefix)));
  const longest = Math.max(0, ...ours.map(([, , micros]) => micros));
  return { ms: Math.round(ms), maxPingMs: Math.round(maxPing * 10) / 10, maxCommandMs: longest / 1000 };
}

const bytes = messages.reduce((sum, m) => sum + JSON.stringify(m).length, 0);
await storage.save({ ...state, id: `${state.id}-warm`, messages: messages.slice(0, 10) });
const save = await measure(() => storage.save(state));
let loaded: { messages: unknown[] } | undefined;
const load = await measure(async () => {
  loaded = await storage.load(state.id);
});
if (loaded?.messages.length !== count) throw new Error("the session did not load whole");
for (const id of await storage.list()) await storage.delete(id);
await storage.close();
pinger.postMessage("quit");
for (let i = 0; i + 1 < saved.length; i += 2) await admin.config("SET", saved[i]!, saved[i + 1]!);
await admin.quit();
console.log(
  JSON.stringify({
    megabytes: Math.round(bytes / 1e5) / 10,
    saveMs: save.ms,
    saveMaxPingMs: save.maxPingMs,
    loadMs: load.ms,
    saveMaxCommandMs: save.maxCommandMs,
    loadMaxPingMs: load.maxPingMs,
    loadMaxCommandMs: load.maxCommandMs,
  }),
);
