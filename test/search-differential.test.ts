// A small seeded differential test of search: the same writes on memory, SQLite, PGlite and a Citus cluster (when
// there is one; test/fixtures/citus-db.ts), then the same queries
// (drawn from the corpus, plus hostile ones), ranked recall and all-words alike; every backend must match the same
// messages and entries, and rank the messages holding every word first. Relevance within a tier may differ
// (weights are computed per backend), so sets are compared, with a limit above any match count. The fuzz this
// comes from found SQLite folding non-Latin text differently, Postgres entries not found by key, and a label's
// entries hidden by other labels on SQLite.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { hasContextStorage } from "../src/contract/context.js";
import type { SessionStore } from "../src/contract/store.js";
import { citusStores } from "./fixtures/citus-db.js";
import { pgliteUnlessSwitchedOff } from "./fixtures/postgres-db.js";
import { corpusStores, queries } from "./helpers/search-corpus.js";

const SCOPES = [{}, { sessionId: "s1" }, { branch: "active" as const }];
// The corpus's stop words (ranked recall drops them; the all-words search keeps them).
const STOP = new Set(["the", "a", "of", "and", "or", "not"]);

/** Every query's matches on `store`, one line each, for a diff that names the query. */
async function answers(store: SessionStore): Promise<string[]> {
  const out: string[] = [];
  for (const query of queries) {
    for (const scope of SCOPES) {
      const key = (h: { sessionId?: string; id: string }) => `${h.sessionId}/${h.id}`;
      const ranked = await store.searchMessages(query, { ...scope, limit: 1000 });
      const all = await store.searchMessages(query, { ...scope, limit: 1000, match: "all" });
      out.push(`${JSON.stringify(query)} ${JSON.stringify(scope)}: ${ranked.map(key).sort()}`);
      out.push(`${JSON.stringify(query)} ${JSON.stringify(scope)} all: ${all.map(key).sort()}`);
      // Ranked recall puts the messages holding every word first (for queries of content words, where both
      // searches read the same words).
      if (!/["\s]/.test(query.trim()) || /^[\p{L}\p{N}]+ [\p{L}\p{N}]+$/u.test(query)) {
        if (!query.split(" ").some((w) => STOP.has(w.toLowerCase()))) {
          const first = new Set(ranked.slice(0, all.length).map(key));
          const missing = all.map(key).filter((k) => !first.has(k));
          assert.deepEqual(missing, [], `all-words hits come first for ${JSON.stringify(query)}`);
        }
      }
    }
    assert.ok(hasContextStorage(store));
    const found = await store.entries.searchEntries("kb", query, 1000);
    out.push(`${JSON.stringify(query)} entries: ${found.map((h) => h.key).sort()}`);
  }
  return out;
}

const pglite = await pgliteUnlessSwitchedOff();
// The cluster too (a distributed store must answer as one server does); skipped with the reason without one.
const citus = await citusStores("differential");
let stores: { name: string; store: SessionStore }[] = [];
before(async () => {
  stores = await corpusStores(pglite, "differential", citus);
});
after(async () => {
  for (const { store } of stores) await store.close();
  await pglite?.close();
});

test("every backend matches the same messages and entries for the same queries", async () => {
  const [reference, ...others] = stores;
  const expected = await answers(reference!.store);
  assert.ok(
    expected.some((line) => /: \S/.test(line)),
    "the queries match something",
  );
  assert.ok(expected.some((line) => line.startsWith('"hiddenword" {}: ') && line.endsWith(": ")));
  for (const { name, store } of others) {
    const actual = await answers(store);
    const differing = actual.filter((line, i) => line !== expected[i]).slice(0, 5);
    assert.deepEqual(differing, [], `${name} differs from ${reference!.name}:\n${differing.join("\n")}`);
  }
});
