import assert from "node:assert/strict";
import { test } from "node:test";
import { parseQuery } from "../src/search/query.js";
import { foldToken, TOKEN, tokenize } from "../src/search/tokens.js";
import { FamilyExpander } from "../src/sql/engines/sqlite/fts.js";
import { SqlTagDriver } from "../src/sql/engines/sqlite/sql-tag-driver.js";
import { flushSearchIndex } from "../src/sql/search/sqlite-indexing.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { msg } from "../src/testing/contract/harness.js";

async function storeWith(texts: string[]): Promise<SqliteStore> {
  const store = new SqliteStore(":memory:");
  for (const [i, text] of texts.entries()) await store.session("s").appendMessage(msg(`m${i}`, text));
  flushSearchIndex(store.driver);
  return store;
}

test("word-family prefixes become the index's own terms, kept current as words are indexed", async () => {
  const store = await storeWith(["quibbles", "she quibbled", "quiet quilt"]);
  const expander = new FamilyExpander(store.driver, "agent_messages_fts");
  assert.deepEqual(
    expander.families(parseQuery("quibbling")),
    new Map([["quibbl", ["quibbled", "quibbles"]]]),
  );
  await store.session("s").appendMessage(msg("m9", "endless quibbling"));
  flushSearchIndex(store.driver);
  assert.deepEqual(expander.families(parseQuery("quibble"))?.get("quibbl"), [
    "quibbled",
    "quibbles",
    "quibbling",
  ]);
  // No indexed word with the root: an empty family, so the caller knows the query cannot match.
  assert.deepEqual(expander.families(parseQuery("xylophones")), new Map([["xylophon", []]]));
  await store.close();
});

test("large families, non-ASCII roots, phrases and exact words stay FTS5 queries", async () => {
  const store = await storeWith(Array.from({ length: 40 }, (_, i) => `zorbal${i}x`));
  const expander = new FamilyExpander(store.driver, "agent_messages_fts");
  assert.deepEqual(expander.families(parseQuery("zorbals")), new Map());
  assert.deepEqual(expander.families(parseQuery('résumés "zorbal1x now" the 2024')), new Map());
  await store.close();
});

test("a sql-tag store (a Durable Object) keeps prefix queries: no temp table is created there", () => {
  let statements = 0;
  const driver = new SqlTagDriver({
    sql: () => {
      statements++;
      return [];
    },
  });
  assert.deepEqual(
    new FamilyExpander(driver, "agent_messages_fts").families(parseQuery("deployments")),
    new Map(),
  );
  assert.equal(statements, 0);
});

test("ASCII text tokenizes and folds as the Unicode path does", () => {
  const text = "Deploy_42, RUNNING-tests; café naïve \u212Aelvin 123";
  // The Unicode path, spelled out: what every text took before the ASCII fast path.
  const unicode = (t: string) => t.toLowerCase().match(TOKEN) ?? [];
  assert.deepEqual(tokenize("Deploy_42, RUNNING-tests x9"), unicode("Deploy_42, RUNNING-tests x9"));
  assert.deepEqual(tokenize(text), unicode(text));
  assert.equal(foldToken("Deploy"), "deploy");
  assert.equal(foldToken("Café"), "cafe");
  assert.deepEqual(parseQuery("2024 deployments"), [
    { kind: "word", word: "2024", prefix: null },
    { kind: "word", word: "deployments", prefix: "deploy" },
  ]);
});

test("a plain ASCII query parses to the terms the general parser gives", () => {
  // A character outside ASCII sends a query down the general path; an ellipsis adds no term to it.
  const general = (query: string) => parseQuery(`${query} \u2026`);
  const queries = [
    "Deploy the APP",
    "deploy deploys deployed DEPLOYMENT",
    "run running RUN runs",
    "creation create creating happily happy",
    "a-b_c d.e/f (g) [h] {i} @j `k` ~l",
    "12 1234 12a3 abc123 0",
    "  spaced\tout\nlines  ",
    "stopped stopping fall falling buzzes misses",
    // Irregular lemmas: forms collapse into one term, a word of the same prefix and no lemma stays its own.
    "go went GONE going goes",
    "maker making made make",
    "making maker",
    "children child kids",
    "dog dogs dog DOG try tried",
    "",
    // Quotes: phrases, one quoted word (a word), empty quotes, repeats, a quote never closed.
    '"deploy the app" now',
    'say "Hello, World" and "hello world" and "HELLO" hello',
    'a "" b "c d" "c d e" "c d"',
    'before "open phrase never closed',
    '"one" "two three" "four five six',
    'x"y z"w',
    // More words than the fast path takes: the general parser answers.
    Array.from({ length: 20 }, (_, i) => `word${i} repeat`).join(" "),
  ];
  for (const query of queries) assert.deepEqual(parseQuery(query), general(query), query);
  // Repeats collapse by word and by family, and count once against the limit.
  assert.equal(parseQuery("deploy deploys deployed").length, 1);
  assert.equal(parseQuery("word ".repeat(40), { maxQueryChars: 4096, maxQueryTerms: 1 }).length, 1);
  assert.throws(() => parseQuery("one two three", { maxQueryChars: 4096, maxQueryTerms: 2 }), {
    code: "INVALID_ARGUMENT",
  });
});
