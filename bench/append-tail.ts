/**
 * Where an append's mean and p99 go above its p50 on SQLite: CPU time (`process.cpuUsage()`, which a loaded machine
 * distorts less than wall time) and wall time of every append to one long session, for store settings side by
 * side, interleaved in blocks so machine noise hits every variant alike. The appends that carried the search
 * index's batch are counted apart. `npm run bench:script bench/append-tail.ts`.
 * With TAIL_YIELD=1 the loop yields to the event loop after every append (outside the timer), as an agent
 * awaiting its model does, so the store's idle work (idle-work.ts) runs between appends; "CPU all-in" then counts
 * it too (the CPU of a whole block over its appends).
 * Env: TAIL_PREFILL (messages before timing, default 10000), TAIL_N (timed appends per variant, default 6144),
 * TAIL_YIELD, TAIL_DIR.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { indexedSeq } from "../src/sql/search/sqlite-indexing.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { makeMessage, rng } from "./data.js";
import { removeDbFiles } from "./workloads.js";

const prefill = Number(process.env.TAIL_PREFILL ?? "10000");
const n = Number(process.env.TAIL_N ?? "6144");
const dir = process.env.TAIL_DIR ?? join(process.cwd(), ".bench-data", "tail");
mkdirSync(dir, { recursive: true });
const yieldEach = process.env.TAIL_YIELD === "1";
const BLOCK = 256;

const fts = (setting: string, value: number) => (s: SqliteStore) =>
  s.driver.run(`INSERT INTO agent_messages_fts (agent_messages_fts, rank) VALUES ('${setting}', ${value})`);
const pragma = (sql: string) => (s: SqliteStore) => void s.driver.get(`PRAGMA ${sql}`);

// Applied right after opening, before the session is filled: FTS5 settings changed on a grown index show a
// transient (deferred merges) rather than their steady state.
const variants: Record<string, (s: SqliteStore) => void> = {
  current: () => {},
  "no idle work": (s) => (s as unknown as { idle: { close(): void } }).idle.close(),
  "automerge 4": fts("automerge", 4),
  "wal_autocheckpoint 1000": pragma("wal_autocheckpoint = 1000"),
  // Migration 9's covering index for ranked recall: what it costs an append.
  "no node index": (s) => s.driver.run("DROP INDEX agent_messages_node"),
  "before #18 (all three)": (s) => {
    (s as unknown as { idle: { close(): void } }).idle.close();
    fts("automerge", 4)(s);
    pragma("wal_autocheckpoint = 1000")(s);
  },
};

const r = rng(7);
const messages = Array.from({ length: prefill + n }, (_, i) =>
  makeMessage(r, `m${i}`, i % 2 === 0 ? "user" : "assistant"),
);
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

const runs = Object.entries(variants).map(([name, setup]) => {
  const file = join(dir, `${name.replace(/\W+/g, "-")}.db`);
  removeDbFiles(file);
  const store = new SqliteStore(file);
  setup(store);
  return {
    name,
    file,
    store,
    session: store.session("s1"),
    cpu: [] as number[],
    wall: [] as number[],
    batch: [] as number[],
    all: 0,
  };
});
for (const run of runs) for (let i = 0; i < prefill; i++) await run.session.appendMessage(messages[i]!);

for (let start = prefill; start < prefill + n; start += BLOCK) {
  for (const run of runs) {
    const blockStart = cpu();
    for (let i = start; i < Math.min(prefill + n, start + BLOCK); i++) {
      const before = indexedSeq(run.store.driver);
      const c0 = cpu();
      const t0 = performance.now();
      await run.session.appendMessage(messages[i]!);
      const wall = (performance.now() - t0) * 1000;
      const used = cpu() - c0;
      run.cpu.push(used);
      run.wall.push(wall);
      if (indexedSeq(run.store.driver) !== before) run.batch.push(used);
      if (yieldEach) await new Promise((resolve) => setTimeout(resolve, 0));
    }
    run.all += cpu() - blockStart;
  }
}

const q = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f = (x: number) => x.toFixed(0).padStart(6);
console.log(
  `${n} appends per variant after ${prefill}; µs; interleaved blocks of ${BLOCK}${yieldEach ? "; yielding after each" : ""}`,
);
for (const run of runs) {
  console.log(
    `${run.name.padEnd(24)} CPU mean ${f(mean(run.cpu))} p50 ${f(q(run.cpu, 0.5))} p99 ${f(q(run.cpu, 0.99))} p99.9 ${f(q(run.cpu, 0.999))}` +
      ` | wall mean ${f(mean(run.wall))} p50 ${f(q(run.wall, 0.5))} p99 ${f(q(run.wall, 0.99))} p99.9 ${f(q(run.wall, 0.999))}` +
      ` | batch appends ${run.batch.length}, CPU mean ${run.batch.length ? f(mean(run.batch)) : "     –"}` +
      ` | CPU all-in ${f(run.all / n)}`,
  );
}
for (const run of runs) {
  await run.store.close();
  removeDbFiles(run.file);
}
