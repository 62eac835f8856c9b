/**
 * CPU profile helper for one scoped search at an everyday size (issue #18): builds one session of
 * SEARCH_PROFILE_SIZE messages (default 10,000) and runs the everyday bench's one- and two-word queries in a loop,
 * printing the p50 / mean of `.search()`; after `npm run build`, run under
 * `node --cpu-prof --import tsx --import ./bench/shipped.mjs bench/search-profile.ts`.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { load } from "./agent-session.js";
import { BANDS, chainRows, rng, VOCABULARY } from "./data.js";
import { nowUs, summarize } from "./stats.js";
import { openLoaded, removeDbFiles } from "./workloads.js";

const size = Number(process.env.SEARCH_PROFILE_SIZE ?? 10_000);
const rounds = Number(process.env.SEARCH_PROFILE_ROUNDS ?? 20);
const dir = fileURLToPath(new URL("../.bench-data/tmp/", import.meta.url));
mkdirSync(dir, { recursive: true });
const file = join(dir, `search-profile-${size}.db`);
const t = await openLoaded(await load(), file, chainRows("s1", size));
const r = rng(18);
const bands = Object.values(BANDS);
const qs = Array.from({ length: 300 }, (_, i) => {
  const [lo, hi] = bands[i % bands.length]!;
  const words = i % 2 === 0 ? 1 : 2;
  return Array.from({ length: words }, () => VOCABULARY[lo + Math.floor(r() * (hi - lo))]!).join(" ");
});
for (const q of qs.slice(0, 20)) await t.search(q, "s1");
const samples: number[] = [];
for (let k = 0; k < rounds; k++) {
  for (const q of qs) {
    const t0 = nowUs();
    await t.search(q, "s1");
    samples.push(nowUs() - t0);
  }
}
const s = summarize(samples);
console.log(`size ${size}: p50 ${s.p50.toFixed(0)} µs, mean ${s.mean.toFixed(0)} µs over ${samples.length}`);
await t.close();
removeDbFiles(file);
