/**
 * The FTS statement alone, ours against the reference's, with cold CPU caches (issue #18): one N-message session
 * (default 1,000) in each store, the everyday bench's W-word queries (default 1), and before every timed statement
 * an 8 MB sweep that evicts what the last one touched — as the rest of an app's work does between two searches.
 * Statement variants run in a rotating order. Warm loops hide what the A/B (bench/everyday-ab.ts) shows: there,
 * our ranked statement was ~80 % of a two-word search. `N=10000 W=2 npm run bench:script bench/search-cold.ts`
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { parseQuery } from "../src/search/query.js";
import { FamilyExpander, prefixUpperBound, toFts5 } from "../src/sql/engines/sqlite/fts.js";
import type { SqliteStore } from "../src/sqlite/store.js";
import { load as loadOurs } from "./agent-session.js";
import { bandQueries, chainRows } from "./data.js";
import { load as loadReference } from "./reference.js";
import { openLoaded, removeDbFiles } from "./workloads.js";

const size = Number(process.env.N ?? 1000);
const words = Number(process.env.W ?? 1);
const rounds = Number(process.env.K ?? 8);
const dir = fileURLToPath(new URL("../.bench-data/tmp/", import.meta.url));
mkdirSync(dir, { recursive: true });
const queries = bandQueries(150, words, 17 + words);

const refFile = join(dir, `cold-ref-${size}.db`);
const oursFile = join(dir, `cold-ours-${size}.db`);
await (await openLoaded(await loadReference(), refFile, chainRows("s1", size))).close();
const ours = await openLoaded(await loadOurs(), oursFile, chainRows("s1", size));
const store = (ours as unknown as { store: SqliteStore }).store;
const ref = new Database(refFile, { readonly: true });

// The reference's scoped search (one phrase) and its store-wide one (every word), as agents@0.22 writes them.
const refPhrase = ref.prepare(`SELECT f.id, f.role, f.content FROM assistant_fts f
  INNER JOIN assistant_messages m ON m.id = f.id AND m.session_id = f.session_id
  WHERE assistant_fts MATCH ? AND f.session_id = ? ORDER BY rank LIMIT 20`);
const refAnd = ref.prepare(
  "SELECT id, role, content FROM assistant_fts WHERE assistant_fts MATCH ? ORDER BY rank LIMIT 20",
);
// Ours: the flat ranked statement of src/sqlite/search/search.ts, fed three renderings of the same query.
const F = "agent_messages_fts";
const flat = (match: string) =>
  store.driver.column(
    `SELECT rowid AS seq, bm25(${F}, 1.0, 0.0) AS score FROM ${F} WHERE ${F} MATCH ? ORDER BY score, seq DESC LIMIT 20`,
    [match],
  );
const quoted = (q: string, join: string) =>
  q
    .split(" ")
    .map((w) => `"${w}"`)
    .join(join);
const expander = new FamilyExpander(store.driver, F);
// The look-up FamilyExpander makes on a cache miss, on a vocabulary table of this bench's own.
store.driver.run(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.bench_vocab USING fts5vocab(main, ${F}, 'row')`);
const vocabFamily = (word: string) => {
  const [term] = parseQuery(word);
  const root = term?.kind === "word" ? (term.prefix ?? term.word) : word;
  return store.driver.tuples("SELECT term, doc FROM temp.bench_vocab WHERE term >= ? AND term < ? LIMIT 33", [
    root,
    prefixUpperBound(root),
  ]);
};
const expanded = new Map(
  queries.map((q) => [q, toFts5(parseQuery(q), "text", expander.families(parseQuery(q)))]),
);

const variants: Record<string, (q: string) => unknown> = {
  "reference: scoped (phrase), whole statement": (q) => refPhrase.all(`"${q}"`, "s1"),
  "reference: every word, whole statement": (q) => refAnd.all(quoted(q, " ")),
  "ours: word families as prefixes (today)": (q) => flat(toFts5(parseQuery(q), "text")),
  "ours: word families as ORed index terms": (q) => flat(expanded.get(q)!),
  "ours: exact words, no families": (q) => flat(`text : (${quoted(q, " AND ")})`),
  "ours: one family's terms from fts5vocab": (q) => vocabFamily(q.split(" ")[0]!),
  "ours: one family from the connection's cache": (q) => expander.families(parseQuery(q.split(" ")[0]!)),
};

const sweep = new Float64Array(1 << 20);
const evict = () => {
  let sum = 0;
  for (let i = 0; i < sweep.length; i += 8) sum += sweep[i]!;
  sweep[0] = sum;
};
const names = Object.keys(variants);
const times = new Map<string, number[]>(names.map((name) => [name, []]));
let turn = 0;
for (let k = 0; k < rounds; k++) {
  for (const q of queries) {
    turn++;
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + turn) % names.length]!;
      evict();
      const t0 = process.hrtime.bigint();
      variants[name]!(q);
      times.get(name)!.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
  }
}
await ours.close();
ref.close();
removeDbFiles(refFile);
removeDbFiles(oursFile);
const p50 = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1] ?? 0;
console.log(`${size} messages, ${words} word(s), cold caches, p50 of ${rounds} × ${queries.length} queries`);
for (const name of names) console.log(`${name.padEnd(46)} ${p50(times.get(name)!).toFixed(1)} µs`);
