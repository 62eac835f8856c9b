/**
 * Fused search against text-only on SQLite, LoCoMo with the recorded facts (issue #78's bar: fused p50 ≤ 2× text):
 * every question asked of a store without facts (text), of the store with facts with `facts: false`, and fused,
 * interleaved question by question so a loaded machine slows all alike (variants 5–8: `authors: true`, and stores
 * whose turns carry their speaker as author, docs/RECALL.md#who-said-it); wall and CPU p50 of each, and each row's
 * recall figures (recall-metrics.ts: R@k, recall-all@10, MRR), and the load average at the start and end.
 * FUSE_PROFILE_ROUNDS (default 5); FUSE_PROFILE_ONLY:
 * the variants' indexes to run (e.g. `2` for a profile of the fused search alone). Run `node --import tsx bench/fuse-profile.ts` (add --cpu-prof for a profile);
 * the seeded stores are kept under .bench-data/tmp/.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SearchItem, StoreSearchOptions } from "../src/contract/search.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { type Conversation, LOCOMO_DATA, seedConversations } from "./locomo.js";
import { loadObservations, seedWithFacts } from "./locomo-facts.js";
import { countQuestion, newTally, TALLY_HEADER, tallyCells } from "./recall-metrics.js";
import { summarize } from "./stats.js";

const rounds = Number(process.env.FUSE_PROFILE_ROUNDS ?? 5);
const dir = fileURLToPath(new URL("../.bench-data/tmp/", import.meta.url));
mkdirSync(dir, { recursive: true });
const data = JSON.parse(readFileSync(LOCOMO_DATA, "utf8")) as Conversation[];
const observations = loadObservations();
if ("skipped" in observations) throw new Error(observations.skipped);

async function seeded(name: string, seed: (store: SqliteStore) => Promise<unknown>): Promise<SqliteStore> {
  const kept = join(dir, `fuse-profile-${name}.db`);
  if (!existsSync(kept)) {
    const store = new SqliteStore(kept);
    await seed(store);
    await store.close();
  }
  const file = join(dir, `fuse-profile-${name}-run.db`);
  copyFileSync(kept, file);
  return new SqliteStore(file);
}

const text = await seeded("text", (s) => seedConversations(s, data));
const facts = await seeded("facts", (s) => seedWithFacts(s, data, observations));
// Each turn with its speaker as its author (docs/RECALL.md#who-said-it), beside the protocol.
const authoredText = await seeded("text-authors", (s) => seedConversations(s, data, { authors: true }));
const authoredFacts = await seeded("facts-authors", (s) =>
  seedWithFacts(s, data, observations, undefined, true),
);
const owned = await seeded("owner", async (s) => {
  for (const conv of data) await s.registry.create({ id: conv.conv, name: conv.conv, owner: "locomo" });
  await seedWithFacts(s, data, observations, "locomo");
});

const questions = data.flatMap((conv) =>
  conv.qa
    .filter((q) => q.category !== 5 && q.evidence?.length)
    .map((q) => ({
      conv: conv.conv,
      question: q.question,
      evidence: (q.evidence ?? []).flatMap((e) => e.split(/[;,\s]+/)).filter((e) => /^D\d+:\d+$/.test(e)),
    }))
    .filter((q) => q.evidence.length > 0),
);

type Ask = (conv: string, question: string) => Promise<string[][]>;
const asker =
  (store: SqliteStore, extra: { facts?: boolean | "hits"; authors?: boolean }): Ask =>
  async (conv, question) => {
    const options = { sessionId: conv, limit: 20, match: "any", ...extra } as StoreSearchOptions;
    const items = (await store.searchMessages(question, options)) as SearchItem[];
    return items.map((hit) => ("kind" in hit ? hit.sources.map((s) => s.messageId) : [hit.id]));
  };
const pooled: Ask = async (conv, question) => {
  const hits = await owned.searchMessages(question, { owner: "locomo", limit: 20, match: "any" });
  return hits.map((hit) => (hit.sessionId === conv ? [hit.id] : []));
};
const only = process.env.FUSE_PROFILE_ONLY?.split(",");
const variants = (
  [
    ["text (no facts)", asker(text, {})],
    ["facts store, facts: false", asker(facts, { facts: false })],
    ["fused", asker(facts, { facts: true })],
    ["fused, facts: hits", asker(facts, { facts: "hits" })],
    ["pooled owner", pooled],
    ["text, authors: true", asker(text, { authors: true })],
    ["authors, text, authors: true", asker(authoredText, { authors: true })],
    ["authors, text", asker(authoredText, {})],
    ["authors, fused, authors: true", asker(authoredFacts, { facts: true, authors: true })],
  ] as [string, Ask][]
).filter((_, i) => only === undefined || only.includes(String(i)));
const loadAt = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ");
const loadStart = loadAt();
const wall = variants.map(() => [] as number[]);
const cpu = variants.map(() => [] as number[]);
const tallies = variants.map(() => newTally());
for (let round = 0; round < rounds; round++) {
  for (const q of questions) {
    for (const [v, [, ask]] of variants.entries()) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const ids = await ask(q.conv, q.question);
      const t1 = performance.now();
      const c1 = process.cpuUsage(c0);
      if (round > 0) {
        wall[v]!.push((t1 - t0) * 1000);
        cpu[v]!.push(c1.user + c1.system);
      } else {
        countQuestion(tallies[v]!, ids, q.evidence);
      }
    }
  }
}
const base = summarize(wall[0]!).p50;
const baseCpu = summarize(cpu[0]!).p50;
for (const [v, [label]] of variants.entries()) {
  const w = summarize(wall[v]!);
  const c = summarize(cpu[v]!);
  console.log(
    `${label.padEnd(28)} ${TALLY_HEADER.join("/")} ${tallyCells(tallies[v]!).join(" / ")}  wall p50 ${w.p50.toFixed(0)} µs (${(w.p50 / base).toFixed(2)}×)  cpu p50 ${c.p50.toFixed(0)} µs (${(c.p50 / baseCpu).toFixed(2)}×)`,
  );
}
// The ratios hold for one machine state only: a loaded machine slows every variant, not all alike.
console.log(`load average (1 / 5 / 15 min) at the start: ${loadStart}; at the end: ${loadAt()}`);
await Promise.all([text.close(), facts.close(), owned.close(), authoredText.close(), authoredFacts.close()]);
