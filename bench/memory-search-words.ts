/**
 * How long one search of a MemoryStore holds the event loop with many messages and a long query: COUNT (default
 * 100,000) short messages of random words over SESSIONS (default 100) sessions, searched ROUNDS (default 5) times
 * with a query of WORDS (default 32) distinct words; the first search (which makes every row's words) is reported
 * apart from the rest. `npm run bench:script bench/memory-search-words.ts`.
 */
import { MemoryStore } from "../src/memory/store.js";
import { rng } from "./data.js";

const count = Number(process.env.COUNT ?? 100_000);
const sessions = Number(process.env.SESSIONS ?? 100);
const rounds = Number(process.env.ROUNDS ?? 5);
const words = Number(process.env.WORDS ?? 32);
const random = rng(7);
const vocabulary = Array.from({ length: 5000 }, (_, i) => `word${i.toString(36)}x`);
const pick = () => vocabulary[Math.floor(random() * vocabulary.length)]!;
const sentence = (n: number) => Array.from({ length: n }, pick).join(" ");

const store = new MemoryStore();
for (let i = 0; i < count; i++) {
  const text = sentence(8 + Math.floor(random() * 12));
  await store
    .session(`s${i % sessions}`)
    .appendMessage({ id: `m${i}`, role: "user", parts: [{ type: "text", text }] });
}
const times: number[] = [];
for (let i = 0; i < rounds; i++) {
  const query = [...new Set(Array.from({ length: words * 2 }, pick))].slice(0, words).join(" ");
  const start = performance.now();
  await store.searchMessages(query, { limit: 20 });
  times.push(performance.now() - start);
}
const rest = times.slice(1).sort((a, b) => a - b);
console.log(
  `memory: ${count} messages, ${words}-word query: first search ${times[0]!.toFixed(0)} ms, ` +
    `then median ${rest[Math.floor(rest.length / 2)]?.toFixed(0) ?? "-"} ms`,
);
await store.close();
