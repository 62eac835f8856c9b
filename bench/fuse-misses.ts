/**
 * Where fused recall stands against its own ceiling (issue #91), by the recall protocol on SQLite with the recorded
 * facts: per conversation and in all, R@10 of text alone and fused, the ceiling (an evidence turn in the text top 10
 * or among the sources of the first 10 facts in scope), the questions text alone answered that fusion pushed out,
 * and those the ceiling holds through a fact only and the fused top 10 misses. The facts are read as the search
 * reads them (`facts: "hits"`: the facts in scope, in their fusion order), so the figures need no hook into the
 * fusion and hold for any data set of the same shape (BENCH_RECALL_DATA, BENCH_RECALL_FACTS). FUSE_MISSES_LIST=1
 * prints each missed question with its evidence, its first fact naming an evidence turn and that turn's text rank.
 * Run `node --import tsx bench/fuse-misses.ts`; the seeded store is kept under .bench-data/tmp/.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FactSearchHit, SearchItem, StoreSearchOptions } from "../src/contract/search.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { type Conversation, LOCOMO_DATA } from "./locomo.js";
import { loadObservations, seedWithFacts } from "./locomo-facts.js";

const K = 10;
const dir = fileURLToPath(new URL("../.bench-data/tmp/", import.meta.url));
mkdirSync(dir, { recursive: true });
const data = JSON.parse(readFileSync(LOCOMO_DATA, "utf8")) as Conversation[];
const observations = loadObservations();
if ("skipped" in observations) throw new Error(observations.skipped);
const kept = join(dir, "fuse-misses.db");
if (!existsSync(kept)) {
  const seeding = new SqliteStore(kept);
  await seedWithFacts(seeding, data, observations);
  await seeding.close();
}
const file = join(dir, "fuse-misses-run.db");
copyFileSync(kept, file);
const store = new SqliteStore(file);

/** One search's items, in order: a turn as its id, a fact as its source ids. */
async function ask(
  conv: string,
  question: string,
  extra: { facts: boolean | "hits"; limit?: number },
): Promise<SearchItem[]> {
  const options = { sessionId: conv, limit: 20, match: "any", ...extra } as StoreSearchOptions;
  return (await store.searchMessages(question, options)) as SearchItem[];
}
const isFact = (item: SearchItem): item is FactSearchHit => "kind" in item && item.kind === "fact";
const turnIds = (items: readonly SearchItem[]): string[] => items.flatMap((i) => (isFact(i) ? [] : [i.id]));

interface Row {
  questions: number;
  text: number;
  fused: number;
  ceiling: number;
  pushed: number;
  factOnly: number;
}
const newRow = (): Row => ({ questions: 0, text: 0, fused: 0, ceiling: 0, pushed: 0, factOnly: 0 });
const rows = new Map<string, Row>();
const total = newRow();
const list = process.env.FUSE_MISSES_LIST === "1";
for (const conv of data) {
  const row = newRow();
  rows.set(conv.conv, row);
  for (const q of conv.qa) {
    const evidence = (q.evidence ?? [])
      .flatMap((e) => e.split(/[;,\s]+/))
      .filter((e) => /^D\d+:\d+$/.test(e));
    if (q.category === 5 || evidence.length === 0) continue;
    const text = turnIds(await ask(conv.conv, q.question, { facts: false })).slice(0, K);
    const fused = turnIds(await ask(conv.conv, q.question, { facts: true })).slice(0, K);
    // A page long enough to hold every fact in scope (at most the channel's 30) beside the turns.
    const facts = (await ask(conv.conv, q.question, { facts: "hits", limit: 100 }))
      .filter(isFact)
      .slice(0, K);
    const holds = (ids: readonly string[]) => evidence.some((e) => ids.includes(e));
    const factTurns = facts.flatMap((f) => f.sources.map((s) => s.messageId));
    const inText = holds(text);
    const inFused = holds(fused);
    const inCeiling = inText || holds(factTurns);
    for (const r of [row, total]) {
      r.questions++;
      if (inText) r.text++;
      if (inFused) r.fused++;
      if (inCeiling) r.ceiling++;
      if (inText && !inFused) r.pushed++;
      if (!inText && !inFused && inCeiling) r.factOnly++;
    }
    if (list && inCeiling && !inFused) {
      const at = facts.findIndex((f) => f.sources.some((s) => evidence.includes(s.messageId)));
      const why = inText ? "pushed out" : `fact #${at + 1}: ${facts[at]?.text.slice(0, 60)}`;
      console.log(`${conv.conv} ${q.question.slice(0, 60)} [${evidence.join(" ")}] ${why}`);
    }
  }
}
const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)} %`;
console.log("conversation | questions | R@10 text | R@10 fused | ceiling | pushed out | fact only, missed");
for (const [name, r] of [...rows, ["all", total] as const]) {
  console.log(
    `${name} | ${r.questions} | ${pct(r.text, r.questions)} | ${pct(r.fused, r.questions)} | ${pct(r.ceiling, r.questions)} | ${r.pushed} | ${r.factOnly}`,
  );
}
await store.close();
