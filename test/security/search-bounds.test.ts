// Red-team probes of issue #13 (search freezes the process), kept as tests on every backend. They assert what was
// refused and how small the compiled query is, never how long it took: the probes simply have to complete.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { DEFAULT_QUERY_LIMITS, queryLimits } from "../../src/search/limits.js";
import { parseQuery } from "../../src/search/query.js";
import { scoreText } from "../../src/search/score.js";
import { sessionLexeme, toTsquery } from "../../src/sql/engines/postgres/fts.js";
import { toFts5 } from "../../src/sql/engines/sqlite/fts.js";
import { ids, msg, rejectsWithCode } from "../../src/testing/contract/harness.js";
import { distinctWords, repeated } from "../../src/testing/contract/search-bounds.spec.js";
import { type ProbeEntry, probeBackends } from "./backends.js";

const MB = 1_000_000;
// The probes as filed: one word 4,000 times (43 KB), 20,000 times (Postgres ran out of stack), and 1 MB.
const PROBES = {
  "4,000 repeats": "deployments ".repeat(4000),
  "20,000 repeats": "deployments ".repeat(20_000),
  "1 MB": repeated("deployment Friday", MB),
};
const messages = [
  msg("m1", "the deployment failed on Friday"),
  msg("m2", "deploying again after the Friday fix"),
  msg("m3", "nothing to see here"),
];

/** Counts the quoted terms of an FTS5 expression. */
const ftsTerms = (expression: string) => (expression.match(/"[^"]*"/g) ?? []).length;

describe("query bounds: structure", () => {
  const open = queryLimits({ maxQueryChars: 2 * MB, maxQueryTerms: 1000 });

  test("repeats collapse to one term, whatever the backend renders", () => {
    for (const query of Object.values(PROBES)) {
      const terms = parseQuery(query, open);
      assert.ok(terms.length <= 2, `${terms.length} terms`);
      assert.ok(ftsTerms(toFts5(terms, "text")) <= 2);
      assert.ok((toTsquery(terms, sessionLexeme("s")) ?? "").split(" & ").length <= 3);
    }
    assert.equal(parseQuery("Café CAFE café ".repeat(100), open).length, 1);
    assert.equal(parseQuery(`"a b" "A B" "á b" `.repeat(100), open).length, 1);
  });

  test("with the default limits, every probe is refused before it is tokenised", () => {
    for (const query of Object.values(PROBES)) {
      assert.throws(() => parseQuery(query), { code: "INVALID_ARGUMENT" });
    }
    const terms = parseQuery(distinctWords(DEFAULT_QUERY_LIMITS.maxQueryTerms));
    assert.equal(ftsTerms(toFts5(terms, "text")), DEFAULT_QUERY_LIMITS.maxQueryTerms);
  });

  test("in-memory scoring folds a query's words once per search, not once per message", () => {
    // A 2,000-character accented word was normalised twice per message: seconds on a few thousand messages.
    const terms = parseQuery(`${"é".repeat(2000)} "ñu ñandú"`);
    const normalize = String.prototype.normalize;
    let calls = 0;
    String.prototype.normalize = function (this: string, form?: string) {
      calls++;
      return normalize.call(this, form);
    };
    try {
      for (let i = 0; i < 100; i++) scoreText(terms, `plain message ${i}`);
    } finally {
      String.prototype.normalize = normalize;
    }
    assert.ok(calls <= 3, `${calls} normalisations for 100 messages`);
  });

  test("the limits are validated", () => {
    assert.throws(() => queryLimits({ maxQueryChars: 0 }), { code: "INVALID_ARGUMENT" });
    assert.throws(() => queryLimits({ maxQueryTerms: 1.5 }), { code: "INVALID_ARGUMENT" });
    assert.throws(() => queryLimits(null as never), { code: "INVALID_ARGUMENT" });
    assert.deepEqual(queryLimits({ maxQueryTerms: 8 }), { maxQueryChars: 4096, maxQueryTerms: 8 });
  });
});

for (const backend of await probeBackends()) {
  describe(`query bounds: ${backend.name}`, () => {
    after(() => backend.close());

    test("default limits: the probes are refused with a clear INVALID_ARGUMENT", async () => {
      const store = await backend.open({}, messages);
      for (const query of Object.values(PROBES)) {
        await rejectsWithCode(store.searchMessages(query), "INVALID_ARGUMENT");
        await rejectsWithCode(store.session("s").searchMessages!(query), "INVALID_ARGUMENT");
        if (store.entries)
          await rejectsWithCode(store.entries.searchEntries("kb", query, 10), "INVALID_ARGUMENT");
      }
    });

    test("limits raised past the probes: repeats collapse and the answer is the one-word answer", async () => {
      const entries: ProbeEntry[] = [["kb", "deploy-notes", "deployment on Friday"]];
      const store = await backend.open({ maxQueryChars: 2 * MB, maxQueryTerms: 3 }, messages, entries);
      const once = ids(await store.searchMessages("deployment")).sort();
      assert.deepEqual(once, ["m1", "m2"]);
      assert.deepEqual(ids(await store.searchMessages(PROBES["4,000 repeats"])).sort(), once);
      assert.deepEqual(
        ids(await store.searchMessages(PROBES["20,000 repeats"], { sessionId: "s" })).sort(),
        once,
      );
      assert.deepEqual(ids(await store.searchMessages(PROBES["1 MB"])).sort(), once);
      if (store.entries) {
        const hits = await store.entries.searchEntries("kb", PROBES["20,000 repeats"], 10);
        assert.deepEqual(
          hits.map((h) => h.key),
          ["deploy-notes"],
        );
      }
      await rejectsWithCode(store.searchMessages(distinctWords(4)), "INVALID_ARGUMENT");
    });
  });
}
