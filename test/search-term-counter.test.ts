// Ranked recall on the memory store counts each message's query words through termCounter: each distinct word of
// the messages is compared with the query once per search, not once per message and query word (32 words over
// 100,000 messages held the event loop for seconds). The counts are those of termFrequencies.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryStore } from "../src/memory/store.js";
import { DEFAULT_QUERY_LIMITS } from "../src/search/limits.js";
import { parseQuery } from "../src/search/query.js";
import { recallTerms } from "../src/search/rank.js";
import { termCounter, termFrequencies } from "../src/search/score.js";
import { textTerms } from "../src/search/text-terms.js";

const TEXTS = [
  "The deployments went well, deploying again on Friday",
  "we go to the café; the children deployed it",
  "Crème brûlée: deploy the dogs",
  "nothing to see here",
  "friday friday friday deployment",
  "",
];
const QUERIES = [
  "deployment friday",
  "went dog child",
  '"deploy the dogs" cafe',
  '"deployments went" brulee friday',
  "zebra",
];

test("termCounter counts as termFrequencies does, undefined where nothing matches", () => {
  for (const query of QUERIES) {
    for (const terms of [recallTerms(query, DEFAULT_QUERY_LIMITS), parseQuery(query, DEFAULT_QUERY_LIMITS)]) {
      const count = termCounter(terms);
      for (const text of TEXTS) {
        const { tf } = termFrequencies(terms, textTerms(text));
        const counted = count(textTerms(text));
        assert.deepEqual(counted ?? tf.map(() => 0), tf, `${query} / ${text}`);
        assert.equal(
          counted === undefined,
          tf.every((n) => n === 0),
          `${query} / ${text}`,
        );
      }
    }
  }
});

test("a memory search compares each distinct word of the messages with the query once", async () => {
  const store = new MemoryStore();
  const s = store.session("s");
  for (let i = 0; i < 500; i++) {
    await s.appendMessage({
      id: `m${i}`,
      role: "user",
      parts: [{ type: "text", text: "alpha bravo charlie delta echo" }],
    });
  }
  const query = "deployment kilometers sandwiches watermelons";
  await store.searchMessages(query); // makes every row's words first
  const startsWith = String.prototype.startsWith;
  let calls = 0;
  String.prototype.startsWith = function (this: string, ...args: Parameters<typeof startsWith>) {
    calls++;
    return startsWith.apply(this, args);
  };
  try {
    assert.deepEqual(await store.searchMessages(query), []);
  } finally {
    String.prototype.startsWith = startsWith;
  }
  // 5 distinct words × 4 prefix words, not 500 messages × 5 words × 4 (10,000).
  assert.ok(calls <= 100, `${calls} prefix comparisons`);
  await store.close();
});
