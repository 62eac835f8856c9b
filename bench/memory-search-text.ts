/**
 * What a search of a MemoryStore costs when its messages are large: COUNT (default 10) messages of ~SIZE (default
 * 1.8 MB) of accented text (non-ASCII text takes the slow path of tokenising: folding), searched ROUNDS (default 5)
 * times with different words; the first search is reported apart from the rest, and the heap growth the search
 * data costs (run with `node --expose-gc`). BACKEND=sqlite runs the same on SQLite (`:memory:`), which indexes on
 * its first search. `npm run bench:script bench/memory-search-text.ts`.
 */
import { MemoryStore } from "../src/memory/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { rng } from "./data.js";

const count = Number(process.env.COUNT ?? 10);
const size = Number(process.env.SIZE ?? 1_800_000);
const rounds = Number(process.env.ROUNDS ?? 5);
const random = rng(11);
const WORDS = "café crème brûlée naïve façade élan déjà résumé über straße mañana señor piñata añejo".split(
  " ",
);
const word = () => `${WORDS[Math.floor(random() * WORDS.length)]}${Math.floor(random() * 5000)}`;

function text(): string {
  const parts: string[] = [];
  let length = 0;
  while (length < size) {
    const w = word();
    parts.push(w);
    length += w.length + 1;
  }
  return parts.join(" ");
}

const heap = () => {
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
};
const store = process.env.BACKEND === "sqlite" ? new SqliteStore(":memory:") : new MemoryStore();
const session = store.session("big");
for (let i = 0; i < count; i++) {
  await session.appendMessage({ id: `m${i}`, role: "user", parts: [{ type: "text", text: text() }] });
}
const before = heap();
const times: number[] = [];
for (let i = 0; i < rounds; i++) {
  const start = performance.now();
  await store.searchMessages(`crème ${i}`, { limit: 5 });
  times.push(performance.now() - start);
}
const after = heap();
const rest = times.slice(1).sort((a, b) => a - b);
console.log(
  `${store.backend}: ${count} messages of ${(size / 1e6).toFixed(1)} MB: first search ${times[0]!.toFixed(0)} ms, ` +
    `then median ${rest[Math.floor(rest.length / 2)]?.toFixed(1) ?? "-"} ms` +
    (globalThis.gc ? `; heap +${((after - before) / 1e6).toFixed(1)} MB after the searches` : ""),
);
await store.close();
