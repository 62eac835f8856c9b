import assert from "node:assert/strict";
import { test } from "node:test";
import { flushSearchIndex } from "../src/sql/search/sqlite-indexing.js";
import { appendRow } from "../src/sqlite/append.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { SEARCH_CANDIDATES } from "../src/store/limits.js";
import { msg } from "../src/testing/contract/harness.js";

// The all-words search (match: "all"): relevance is bm25 among the newest SEARCH_CANDIDATES matches, ties newest first. A scope of at most that many rows
// is ranked by one flat statement, a larger one by a nested one (src/sqlite/search/search.ts): both must give that order,
// under every session filter (none, primary-key lookup, session token).

const STRONG = "zeta zeta zeta zeta";
const WEAK = "zeta alpha beta gamma";

/** Appends `count` messages to `sessionId`: the first `strong` say STRONG, the rest WEAK; m{n}-3 also says quokka. */
function load(store: SqliteStore, sessionId: string, count: number, strong: number): void {
  store.driver.transaction(() => {
    let parentId: string | null = null;
    for (let i = 0; i < count; i++) {
      const id = `${sessionId}-${i}`;
      const text = i === 3 ? `${STRONG} quokka` : i < strong ? STRONG : WEAK;
      appendRow(store.driver, sessionId, msg(id, text), { parentId });
      parentId = id;
    }
  });
  flushSearchIndex(store.driver);
}

async function ids(store: SqliteStore, query: string, sessionId?: string): Promise<string[]> {
  const hits = await store.searchMessages(query, {
    match: "all",
    ...(sessionId === undefined ? {} : { sessionId }),
  });
  return hits.map((hit) => hit.id);
}

/** The ids of session `s`'s messages from..to-1, newest first. */
function newestFirst(s: string, from: number, to: number): string[] {
  return Array.from({ length: to - from }, (_, i) => `${s}-${to - 1 - i}`);
}

test("a scope within SEARCH_CANDIDATES rows: best bm25 first, ties newest first", async () => {
  const store = new SqliteStore(":memory:");
  load(store, "a", 40, 5);
  // m3 has one word more than the other strong ones (a longer document), so it ranks after them.
  const expected = [
    ...newestFirst("a", 0, 5).filter((id) => id !== "a-3"),
    "a-3",
    ...newestFirst("a", 5, 40),
  ];
  assert.deepEqual(await ids(store, "zeta", "a"), expected.slice(0, 20));
  assert.deepEqual(await ids(store, "zeta"), expected.slice(0, 20));
  await store.close();
});

for (const [filter, other] of [
  ["alone in the store", 0],
  ["a primary-key lookup per match", 300],
  ["the session token", SEARCH_CANDIDATES + 200],
] as const) {
  test(`a scope over SEARCH_CANDIDATES rows ranks only the newest matches (filter: ${filter})`, async () => {
    const store = new SqliteStore(":memory:");
    const count = SEARCH_CANDIDATES + 100;
    if (other > 0) load(store, "b", other, 50);
    load(store, "a", count, 100);
    // The 100 strong messages are the oldest, outside the newest SEARCH_CANDIDATES matches: the weak ones tie, newest
    // first.
    assert.deepEqual(await ids(store, "zeta", "a"), newestFirst("a", count - 20, count));
    // The bound is on matches, not rows: a word only an old message holds is still found.
    assert.deepEqual(await ids(store, "quokka", "a"), ["a-3"]);
    await store.close();
  });
}

// Ranked recall reads each term's newest matches, at most its cap (SEARCH_CANDIDATES for a query of one term): all
// of them in the index's own order where no more can match, and a phrase first in that order, then newest first
// when it matches more (src/sqlite/search/candidates.ts). Each way, the newest matches are the candidates.
for (const [filter, other] of [
  ["alone in the store", 0],
  ["the session token", SEARCH_CANDIDATES + 200],
] as const) {
  test(`ranked recall over the cap keeps the newest matches of a word and of a phrase (filter: ${filter})`, async () => {
    const store = new SqliteStore(":memory:");
    const count = SEARCH_CANDIDATES + 300;
    if (other > 0) load(store, "b", other, 50);
    load(store, "a", count, 100);
    const ranked = async (query: string) =>
      (await store.searchMessages(query, { sessionId: "a" })).map((hit) => hit.id);
    const newest = newestFirst("a", count - 20, count);
    assert.deepEqual(await ranked("zeta"), newest);
    assert.deepEqual(await ranked('"alpha beta"'), newest);
    // Under the cap, every match is a candidate: the strong messages are the oldest, and rank first.
    assert.deepEqual((await ranked("quokka")).slice(0, 1), ["a-3"]);
    assert.equal((await ranked('"zeta zeta zeta"')).length, 20);
    await store.close();
  });
}
