/**
 * Steadier 1M search p99 on a loaded machine (issue #18): runs the 1M bench's 200 one-term queries ROUNDS times
 * (default 5) against an existing store (STORE, default the cached agent-session 1M store in .bench-data/) and
 * prints, per scope and term band, the p50 and p99 over each query's median time, so one load spike does not set
 * the p99. Uses only this bench's target API, so it also runs unchanged in a checkout of older code.
 * `npm run bench:script bench/search-rounds.ts`
 */
import { fileURLToPath } from "node:url";
import { load } from "./agent-session.js";
import { makeQueries, planStore } from "./data.js";
import { nowUs } from "./stats.js";

const rounds = Number(process.env.ROUNDS ?? 5);
const store =
  process.env.STORE ??
  fileURLToPath(new URL("../.bench-data/agent-session-store-1000000.db", import.meta.url));
const queries = makeQueries(200, planStore(1).typical);
const pct = (a: readonly number[], p: number) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
};
const ms = (us: number) => (us / 1000).toFixed(2);
const t = (await load())();
await t.open(store);
try {
  for (const scoped of [true, false]) {
    const run = (i: number) => t.search(queries[i]!.term, scoped ? queries[i]!.sessionId : undefined);
    for (let i = 0; i < 5; i++) await run(i);
    const per = queries.map(() => [] as number[]);
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < queries.length; i++) {
        const t0 = nowUs();
        await run(i);
        per[i]!.push(nowUs() - t0);
      }
    }
    for (const band of ["common", "mid", "rare"] as const) {
      const medians = queries.flatMap((q, i) => (q.band === band ? [pct(per[i]!, 0.5)] : []));
      const scope = scoped ? "one session" : "all sessions";
      console.log(
        `${scope}, ${band}: p50 ${ms(pct(medians, 0.5))} ms, p99 ${ms(pct(medians, 0.99))} ms (median of ${rounds} rounds)`,
      );
    }
  }
} finally {
  await t.close();
}
