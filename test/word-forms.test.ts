import assert from "node:assert/strict";
import { test } from "node:test";
import { clipHit } from "../src/context/output.js";
import { parseQuery, type QueryWord } from "../src/search/query.js";
import { recallTerms } from "../src/search/rank.js";
import { scoreText } from "../src/search/score.js";
import { irregularForms, shortWordForms } from "../src/search/word-forms.js";
import { toTsquery } from "../src/sql/engines/postgres/fts.js";
import { cannotMatch, FamilyExpander, toFts5 } from "../src/sql/engines/sqlite/fts.js";
import { flushSearchIndex } from "../src/sql/search/sqlite-indexing.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { msg } from "../src/testing/contract/harness.js";

test("a word of an irregular lemma carries every form of it; other words carry none", () => {
  assert.deepEqual(irregularForms("went"), ["go", "goes", "going", "went", "gone"]);
  assert.equal(irregularForms("went"), irregularForms("go"), "one array per lemma");
  assert.deepEqual(irregularForms("children"), ["child", "children"]);
  // Lemmas whose forms are other common words are left out; so are function words.
  for (const word of [
    "bit",
    "born",
    "lie",
    "rose",
    "wound",
    "ground",
    "bound",
    "tears",
    "was",
    "did",
    "had",
  ]) {
    assert.equal(irregularForms(word), undefined, word);
  }
  assert.equal(irregularForms("paint"), undefined);
  const [buy] = parseQuery("Bought") as QueryWord[];
  assert.deepEqual(buy, {
    kind: "word",
    word: "bought",
    prefix: "bought",
    forms: ["buy", "buys", "buying", "bought"],
  });
  // Regular words keep their shape (no `forms` key at all).
  assert.deepEqual(parseQuery("painted"), [{ kind: "word", word: "painted", prefix: "paint" }]);
});

test("a short word carries its regular inflections, spelt by the usual rules; a function word none", () => {
  const cases: [string, string[] | undefined][] = [
    ["dog", ["dog", "dogs", "dogged", "dogging"]],
    ["try", ["try", "tries", "tried", "trying"]],
    ["use", ["use", "uses", "used", "using"]],
    ["tie", ["tie", "ties", "tied", "tying"]],
    ["box", ["box", "boxes", "boxed", "boxing"]],
    ["ski", ["ski", "skis", "skied", "skiing"]],
    ["fee", ["fee", "fees", "feeing"]],
    ["zoo", ["zoo", "zoos", "zooed", "zooing"]],
    ["the", undefined],
    ["was", undefined],
    ["dogs", undefined],
    ["x", undefined],
    ["3d", undefined],
  ];
  for (const [word, forms] of cases) assert.deepEqual(shortWordForms(word), forms, word);
  assert.deepEqual(parseQuery("dog dog DOG").length, 1);
  assert.deepEqual(parseQuery("went"), [
    { kind: "word", word: "went", prefix: "went", forms: irregularForms("went") },
  ]);
});

test("two forms of one lemma are one term, in the plain and the general parse, and count once", () => {
  for (const query of ["go went gone", "gö went gone"]) {
    const terms = parseQuery(query);
    const lemma = terms.filter((t) => t.kind === "word" && t.forms?.[0] === "go");
    assert.equal(lemma.length, 1, query);
  }
  assert.equal(parseQuery("go went going goes", { maxQueryChars: 100, maxQueryTerms: 1 }).length, 1);
  // A word of the same prefix but no irregular lemma matches other messages: a term of its own, in either order and
  // either parser (a non-ASCII word takes the general one).
  for (const query of ["maker making", "making maker", "maker making é", "making maker é"]) {
    const words = parseQuery(query).filter((t) => t.kind === "word" && t.prefix === "mak");
    assert.deepEqual(words.map((t) => (t.kind === "word" ? t.word : "")).sort(), ["maker", "making"], query);
  }
  assert.deepEqual(
    recallTerms("When did Melanie go camping?").map((t) => (t.kind === "word" ? t.word : "")),
    ["melanie", "go", "camping"],
  );
});

test("every backend's query matches the forms: memory scoring, FTS5 and tsquery", () => {
  const terms = parseQuery("go");
  assert.ok(scoreText(terms, "We went camping") > 0);
  assert.equal(scoreText(terms, "the gone-ness of it") > 0, true);
  assert.equal(scoreText(terms, "a good goal"), 0);
  assert.equal(toFts5(terms, "text"), 'text : ("go" OR "goes" OR "going" OR "went" OR "gone")');
  // A word with a family prefix: its family (the index's terms, or the prefix query) and the forms the prefix misses.
  const making = parseQuery("making");
  assert.equal(toFts5(making, "text"), 'text : ("mak"* OR "made")');
  assert.equal(
    toFts5(making, "text", new Map([["mak", ["maker", "making"]]])),
    'text : ("maker" OR "making" OR "made")',
  );
  assert.equal(toTsquery(making), "('mak':* | 'made')");
});

test("an empty family does not stop an irregular word: its other forms still match", async () => {
  const store = new SqliteStore(":memory:");
  try {
    const s = store.session("s");
    await s.appendMessage(msg("m1", "we went home"));
    await s.appendMessage(msg("m2", "she goes there"));
    await s.appendMessage(msg("m3", "nothing here"));
    flushSearchIndex(store.driver);
    const expander = new FamilyExpander(store.driver, "agent_messages_fts");
    const terms = parseQuery("gone");
    const families = expander.families(terms);
    assert.deepEqual(families, new Map([["gone", []]]));
    assert.equal(cannotMatch(terms[0]!, families), false);
    assert.equal(
      cannotMatch(parseQuery("xylophones")[0]!, expander.families(parseQuery("xylophones"))),
      true,
    );
    const rows = store.driver.column<number>(
      "SELECT rowid FROM agent_messages_fts WHERE agent_messages_fts MATCH ? ORDER BY rowid",
      [toFts5(terms, "text", families)],
    );
    assert.equal(rows.length, 2);
  } finally {
    await store.close();
  }
});

test("a long hit is clipped around the first form of the query's word", () => {
  const out = clipHit(`${"a ".repeat(3000)}we went camping ${"b ".repeat(3000)}`, "go camping", 1000);
  assert.match(out, /a we went camping b/);
});
