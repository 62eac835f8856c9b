/**
 * A/B of everyday-size scoped search (issue #18): the reference, another checkout of agent-session (BASE, a path
 * to its repo root with node_modules linked; optional) and this checkout, each over its own copy of one
 * N-message session (default 1,000), searched with the everyday bench's W-word queries (default 1) K rounds
 * (default 10), every query on every target before the next one, in one process: the ratios of one run are what
 * to read. `N=10000 W=2 BASE=/tmp/base npm run bench:script bench/everyday-ab.ts`. Read ratios to the reference from
 * a run without BASE: with two agent-session targets the reference mostly runs right after one of them, which
 * favours both (docs/PERFORMANCE.md, "Everyday sizes").
 *
 * - REF_AND=1 asks the reference the question ours answers (every word, not one phrase) through its store-wide
 *   search: the same messages here, the file holding one session.
 * - SAME=1 asks ours the reference's own scoped question instead: the query as one quoted phrase, its words exact,
 *   adjacent and in order (the reference's porter stemmer still folds some forms). One quoted word is still a word,
 *   matched with its family: our query language has no exact single word.
 * - WARM=n asks every query n more times on every target, untimed, before the K timed rounds (default 0: only ten
 *   queries, so the timed rounds include the process's first searches). On Node 20, V8 interprets a search's
 *   JavaScript for its first few hundred searches and optimises little of it within a thousand (Node 22 and later
 *   have a mid-tier compiler that does so early; `node --always-sparkplug` shows the interpreter's share), so WARM
 *   shows the steady state of a long-running process and WARM=0 the first searches of a new one.
 * - TURN=n makes it a conversation: before each query every target appends n messages (a turn) and yields once,
 *   as awaiting a model does; the turn (appends and search) is timed as well, since agent-session indexes new
 *   messages when it next searches where the reference indexes them as they are appended.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { load as loadOurs } from "./agent-session.js";
import { bandQueries, chainRows, makeMessage, rng } from "./data.js";
import { load as loadReference } from "./reference.js";
import type { BenchTarget, TargetFactory } from "./targets.js";
import { openLoaded, removeDbFiles } from "./workloads.js";

const size = Number(process.env.N ?? 1000);
const words = Number(process.env.W ?? 1);
const rounds = Number(process.env.K ?? 10);
const refAnd = process.env.REF_AND === "1";
const samePhrase = process.env.SAME === "1";
const turn = Number(process.env.TURN ?? 0);
const warmRounds = Number(process.env.WARM ?? 0);
const nextWord = rng(31);
const dir = fileURLToPath(new URL("../.bench-data/tmp/", import.meta.url));
mkdirSync(dir, { recursive: true });

const queries = bandQueries(150, words, 17 + words);

const factories: [string, () => Promise<TargetFactory>][] = [["reference", loadReference]];
if (process.env.BASE) {
  const base = pathToFileURL(join(process.env.BASE, "bench/agent-session.ts")).href;
  factories.push(["base", async () => ((await import(base)) as { load(): Promise<TargetFactory> }).load()]);
}
factories.push(["this checkout", loadOurs]);

const targets: {
  name: string;
  target: BenchTarget;
  file: string;
  times: number[];
  turns: number[];
  hits: number;
}[] = [];
for (const [name, load] of factories) {
  const file = join(dir, `ab-${process.pid}-${targets.length}-${size}.db`);
  const target = await openLoaded(await load(), file, chainRows("s1", size));
  targets.push({ name, target, file, times: [], turns: [], hits: 0 });
}
const permutations = (items: number[]): number[][] =>
  items.length <= 1
    ? [items]
    : items.flatMap((item, at) =>
        permutations([...items.slice(0, at), ...items.slice(at + 1)]).map((rest) => [item, ...rest]),
      );
const orders = permutations(targets.map((_, index) => index));
// The question each target is asked: the query as one phrase for ours with SAME=1, store-wide for the reference with
// REF_AND=1.
const ask = (t: (typeof targets)[number], q: string) => {
  const ours = t.name !== "reference";
  return t.target.search(samePhrase && ours ? `"${q}"` : q, refAnd && !ours ? undefined : "s1");
};
try {
  const warmUp = [...queries.slice(0, 10), ...Array.from({ length: warmRounds }, () => queries).flat()];
  for (const q of warmUp) for (const t of targets) await ask(t, q);
  let added = 0;
  for (let k = 0; k < rounds; k++) {
    for (const [i, q] of queries.entries()) {
      const messages = Array.from({ length: turn }, (_, i) =>
        makeMessage(nextWord, `turn-${added++}`, i % 2 === 0 ? "user" : "assistant"),
      );
      // Every order of the targets in turn, shifted from round to round: a search runs faster right after one by
      // the same library (its code and SQLite's are warm). A fixed order, and a rotation that gave each query the
      // same order in every round, put ~6 % between two instances of the same code; this puts ~2 %.
      const order = orders[(i + k) % orders.length] as number[];
      for (const t of order.map((index) => targets[index] as (typeof targets)[number])) {
        let appending = 0;
        for (const message of messages) {
          const a0 = performance.now();
          await t.target.append("s1", message);
          appending += performance.now() - a0;
        }
        if (turn > 0) await new Promise((resolve) => setImmediate(resolve));
        const t0 = performance.now();
        const hits = await ask(t, q);
        const searching = performance.now() - t0;
        t.times.push(searching * 1000);
        t.turns.push((appending + searching) * 1000);
        if (k === 0) t.hits += hits.length;
      }
    }
  }
} finally {
  for (const t of targets) {
    await t.target.close();
    removeDbFiles(t.file);
  }
}
const quantile = (a: number[], q: number) => [...a].sort((x, y) => x - y)[Math.floor(a.length * q)] ?? 0;
const p50 = (a: number[]) => quantile(a, 0.5);
const p99 = (a: number[]) => quantile(a, 0.99);
const reference = p50(targets[0]!.times);
const referenceTurn = p50(targets[0]!.turns);
const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / (a.length || 1);
console.log(
  `${size} messages, ${words} word(s), ${rounds} × ${queries.length} queries${turn ? `, ${turn} appends before each` : ""}${samePhrase ? ", ours asked the phrase" : ""}${warmRounds ? `, after ${warmRounds} untimed rounds` : ""}${refAnd ? ", the reference asked every word" : ""}`,
);
for (const t of targets) {
  const p = p50(t.times);
  const tail = p99(t.times);
  const line = `${t.name.padEnd(14)} p50 ${p.toFixed(1)} µs (${(p / reference).toFixed(2)}× reference), p99 ${tail.toFixed(1)} µs (${(tail / p99(targets[0]!.times)).toFixed(2)}×), ${t.hits} hits`;
  const pt = p50(t.turns);
  const turnLine = `; turn p50 ${pt.toFixed(1)} µs (${(pt / referenceTurn).toFixed(2)}×), mean ${mean(t.turns).toFixed(1)} µs`;
  console.log(turn ? line + turnLine : line);
}
