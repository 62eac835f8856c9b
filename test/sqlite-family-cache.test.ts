import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { parseQuery } from "../src/search/query.js";
import type { SqlDriver } from "../src/sql/engines/sqlite/driver.js";
import { FamilyExpander, toFts5 } from "../src/sql/engines/sqlite/fts.js";
import { flushSearchIndex } from "../src/sql/search/sqlite-indexing.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { msg } from "../src/testing/contract/harness.js";

const QUERIES = [
  "deployments",
  "running",
  "quibbles",
  "testing",
  "naive",
  "cafes",
  "zebra",
  "deploy running",
];

// Words the random texts draw from: ASCII in every case, accents FTS5 folds, emoji with a variation selector,
// punctuation it splits on.
const WORDS = [
  "deploy",
  "Deployed",
  "DEPLOYMENT",
  "deploys",
  "deploy2prod",
  "redeploy",
  "run",
  "Running",
  "runner",
  "rung",
  "quibble",
  "quibbled",
  "test",
  "tests_x",
  "testing",
  "naïve",
  "naive",
  "Naïveté",
  "café",
  "cafés",
  "cafe",
  "Déployé",
  "deploy\u0301ed",
  "zebra❤️",
  "❤️zebras",
  "—",
  "deploy—run",
  "“testing”",
  "s1",
  "s12",
  "42",
];

function randomText(random: () => number): string {
  const n = 1 + Math.floor(random() * 8);
  return Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(" ");
}

// A seeded generator, so a failure repeats.
function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s / 2_147_483_648;
  };
}

// The families as the index tells them now, through a vocabulary table of the test's own.
function freshFamilies(driver: SqlDriver, roots: string[]): Map<string, string[]> {
  driver.run(
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.truth_vocab USING fts5vocab(main, agent_messages_fts, 'row')",
  );
  const families = new Map<string, string[]>();
  for (const root of roots) {
    const end = root.slice(0, -1) + String.fromCharCode(root.charCodeAt(root.length - 1) + 1);
    const terms = driver.column<string>("SELECT term FROM temp.truth_vocab WHERE term >= ? AND term < ?", [
      root,
      end,
    ]);
    if (terms.length <= 32) families.set(root, terms);
  }
  return families;
}

// The rowids a query matches: with families expanded, and as FTS5's own prefix query.
function matches(driver: SqlDriver, query: string, families?: Map<string, string[]>): number[] {
  const match = toFts5(parseQuery(query), "text", families);
  return driver.column<number>(
    "SELECT rowid FROM agent_messages_fts WHERE agent_messages_fts MATCH ? ORDER BY rowid",
    [match],
  );
}

// A driver over `driver` that counts the reads of a vocabulary table.
function countingVocabReads(driver: SqlDriver): { counting: SqlDriver; vocabReads: () => number } {
  let reads = 0;
  const counting: SqlDriver = Object.assign(Object.create(driver) as SqlDriver, {
    tuples<T extends readonly unknown[]>(sql: string, params?: readonly (string | number | null)[]): T[] {
      if (sql.includes("_vocab")) reads++;
      return driver.tuples<T>(sql, params);
    },
  });
  return { counting, vocabReads: () => reads };
}

function roots(query: string): string[] {
  return parseQuery(query).flatMap((term) =>
    term.kind === "word" && term.prefix !== null ? [term.prefix] : [],
  );
}

test("kept families stay what the index holds as this connection indexes, edits and deletes", async () => {
  const store = new SqliteStore(":memory:");
  const session = store.session("s");
  const expander = new FamilyExpander(store.driver, "agent_messages_fts");
  const random = seeded(18);
  const live: string[] = [];
  const pick = () => live[Math.floor(random() * live.length)] as string;
  for (let round = 0; round < 60; round++) {
    for (let i = random() * 40; i >= 0; i--) {
      const id = `m${round}-${i}`;
      await session.appendMessage(msg(id, randomText(random)));
      live.push(id);
    }
    if (round % 7 === 3) await session.updateMessage(msg(pick(), randomText(random)));
    if (round % 11 === 5) {
      const gone = pick();
      await session.deleteMessages([gone]);
      live.splice(live.indexOf(gone), 1);
    }
    // Some rounds let the store's idle work index the batch, the others index it here, as a search does.
    if (round % 2 === 0) await new Promise((resolve) => setImmediate(resolve));
    flushSearchIndex(store.driver);
    for (const query of QUERIES) {
      const { families, maxMatches } = expander.expand(parseQuery(query));
      // Same matches as FTS5's own prefix query, whatever was kept, and never more than the bound says.
      const found = matches(store.driver, query);
      assert.deepEqual(matches(store.driver, query, families), found, `${round} ${query}`);
      assert.ok(found.length <= maxMatches, `${round} ${query}: ${found.length} > ${maxMatches}`);
      // Until a delete, the very terms the index lists (a deleted message's terms may stay: they match nothing).
      if (round < 5)
        assert.deepEqual(families, freshFamilies(store.driver, roots(query)), `${round} ${query}`);
    }
  }
  await store.close();
});

test("a kept family is not read from the index again; a text only the index can fold is", async () => {
  const store = new SqliteStore(":memory:");
  await store.session("s").appendMessage(msg("a", "deploy now"));
  flushSearchIndex(store.driver);
  const { counting, vocabReads } = countingVocabReads(store.driver);
  const expander = new FamilyExpander(counting, "agent_messages_fts");
  const family = () => expander.families(parseQuery("deployments")).get("deploy");
  assert.deepEqual(family(), ["deploy"]);
  await store.session("s").appendMessage(msg("b", "Deployed it — twice 🚀, DEPLOYS"));
  flushSearchIndex(store.driver);
  assert.deepEqual(family(), ["deploy", "deployed", "deploys"]);
  assert.equal(vocabReads(), 1);
  // `é` is folded before the index sees the text (searchableText), so the family learns "deploye" itself.
  await store.session("s").appendMessage(msg("c", "déployé"));
  flushSearchIndex(store.driver);
  assert.deepEqual(family(), ["deploy", "deploye", "deployed", "deploys"]);
  assert.equal(vocabReads(), 1);
  // `ſ` is folded by the index's tokenizer alone (to `s`): the family is read again rather than guessed.
  await store.session("s").appendMessage(msg("e", "deployſ"));
  flushSearchIndex(store.driver);
  assert.deepEqual(family(), ["deploy", "deploye", "deployed", "deploys"]);
  assert.equal(vocabReads(), 2);
  // So is a term longer than FTS5 may store whole.
  await store.session("s").appendMessage(msg("d", `deploy${"x".repeat(40_000)}`));
  flushSearchIndex(store.driver);
  assert.deepEqual(family(), freshFamilies(store.driver, ["deploy"]).get("deploy"));
  assert.equal(vocabReads(), 3);
  await store.close();
});

test("another connection's writes, or another store over the same handle, are seen", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-families-"));
  try {
    const path = join(dir, "store.db");
    const reader = new SqliteStore(path);
    const writer = new SqliteStore(path);
    await writer.session("s").appendMessage(msg("a", "quibble"));
    flushSearchIndex(writer.driver);
    const expander = new FamilyExpander(reader.driver, "agent_messages_fts");
    assert.deepEqual(expander.families(parseQuery("quibbles")).get("quibbl"), ["quibble"]);
    await writer.session("s").appendMessage(msg("b", "quibbling"));
    flushSearchIndex(writer.driver);
    assert.deepEqual(expander.families(parseQuery("quibbles")).get("quibbl"), ["quibble", "quibbling"]);
    // A second store over the reader's own handle shares its connection: no data_version moves for it.
    const handle = reader.driver.handle;
    assert.ok(handle);
    const sibling = new SqliteStore(handle as never);
    await sibling.session("s").appendMessage(msg("c", "quibbled"));
    flushSearchIndex(sibling.driver);
    assert.deepEqual(expander.families(parseQuery("quibbles")).get("quibbl"), [
      "quibble",
      "quibbled",
      "quibbling",
    ]);
    await sibling.close();
    await writer.close();
    await reader.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a bulk write empties the kept families instead of keeping every text for them", async () => {
  const store = new SqliteStore(":memory:");
  await store.session("s").appendMessage(msg("a", "zebra"));
  flushSearchIndex(store.driver);
  const { counting, vocabReads } = countingVocabReads(store.driver);
  const expander = new FamilyExpander(counting, "agent_messages_fts");
  assert.deepEqual(expander.families(parseQuery("zebras")).get("zebra"), ["zebra"]);
  // A few texts behind: caught up from the log, no second read.
  await store.session("s").appendMessage(msg("b", "zebras"));
  flushSearchIndex(store.driver);
  assert.deepEqual(expander.families(parseQuery("zebras")).get("zebra"), ["zebra", "zebras"]);
  assert.equal(vocabReads(), 1);
  for (let i = 0; i < 600; i++) await store.session("s").appendMessage(msg(`z${i}`, `zebra${i % 40}x`));
  flushSearchIndex(store.driver);
  // Hundreds of texts behind: dropped, and read from the index again. 42 terms now: more than a family holds,
  // so a prefix query, as a fresh read says.
  assert.equal(expander.families(parseQuery("zebras")).has("zebra"), false);
  assert.equal(vocabReads(), 2);
  await store.close();
});

test("the bound on a query's matches counts the documents indexed since the family was read", async () => {
  const store = new SqliteStore(":memory:");
  await store.session("s").appendMessage(msg("a", "zebra"));
  await store.session("s").appendMessage(msg("b", "quibble"));
  flushSearchIndex(store.driver);
  const expander = new FamilyExpander(store.driver, "agent_messages_fts");
  assert.equal(expander.expand(parseQuery("zebras")).maxMatches, 1);
  for (const id of ["c", "d", "e"]) await store.session("s").appendMessage(msg(id, `Zebras ${id} quibble`));
  flushSearchIndex(store.driver);
  assert.equal(expander.expand(parseQuery("zebras")).maxMatches, 4);
  // Every word must match: the family with the fewest documents bounds the query.
  assert.equal(expander.expand(parseQuery("zebras quibbles")).maxMatches, 4);
  assert.equal(matches(store.driver, "zebras quibbles").length, 3);
  // No family, no bound: an exact word or a phrase says nothing.
  assert.equal(expander.expand(parseQuery('zeb "zebras c"')).maxMatches, Number.POSITIVE_INFINITY);
  await store.close();
});
