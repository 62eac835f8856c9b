// SQLite's overlay marks (`compactedBy`, search/overlay-marks.ts) cost a bounded number of statements: a page's hits
// are checked against their overlays by three climb statements at most (src/sql/search/sqlite-overlay-climbs.ts), not a
// statement per climbing step per (hit, overlay) pair. Before, forks at one message with an overlay each made a
// search of the fork words spend thousands (100 forks, 200 hits: 5,357 statements; now 10, as at 10 forks), 12
// nested overlays 196 (now 7; 5 without overlays). OVERLAY_MARKS_FORKS=10,100,1000 measures more sizes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { SEARCH_OVERLAYS } from "../src/store/limits.js";
import { msg } from "../src/testing/contract/harness.js";
import { rng } from "./helpers/rng.js";

const Database = loadBetterSqlite3();

/** A store over a database that counts the statements it runs. */
function countingStore(): { store: SqliteStore; count: () => number; close: () => Promise<void> } {
  let statements = 0;
  const db = new Database(":memory:", { verbose: () => statements++ });
  const store = new SqliteStore(db);
  return {
    store,
    count: () => statements,
    close: async () => {
      await store.close();
      db.close();
    },
  };
}

async function chain(store: SqliteStore, prefix: string, count: number, parent: string | null, text: string) {
  const session = store.session("s");
  let parentId = parent;
  for (let i = 0; i < count; i++) {
    await session.appendMessage(msg(`${prefix}${i}`, `${text} ${i}`), parentId);
    parentId = `${prefix}${i}`;
  }
}

/**
 * bench/scaling.ts's forks: a 300-message path, `b` forks of two messages at its 100th, an overlay on each fork;
 * the oldest fork's messages also say "oldest" (its overlay is the last a hit's newest-first look-up comes to, or
 * beyond the overlays a search reads).
 */
async function forks(store: SqliteStore, b: number): Promise<Map<string, string>> {
  await chain(store, "m", 100, null, "early note");
  for (let j = 0; j < b; j++) await chain(store, `f${j}-`, 2, "m99", j === 0 ? "oldest fork" : "early fork");
  await chain(store, "n", 200, "m99", "early main");
  const covers = new Map<string, string>();
  for (let j = 0; j < b; j++) {
    const { id } = await store.session("s").addCompaction(`fork summary ${j}`, `f${j}-0`, `f${j}-1`);
    // Only a session's newest SEARCH_OVERLAYS overlays mark hits.
    if (j >= b - SEARCH_OVERLAYS) covers.set(`f${j}-0`, id).set(`f${j}-1`, id);
  }
  return covers;
}

/**
 * A 120-message path and 12 overlays nested along it, each from its first message reaching further; the first 96
 * messages (those the overlays cover) say "early".
 */
async function nested(store: SqliteStore): Promise<Map<string, string>> {
  await chain(store, "m", 96, null, "early note");
  await chain(store, "n", 24, "m95", "late note");
  const covers = new Map<string, string>();
  for (let i = 0; i < 12; i++) {
    const { id } = await store.session("s").addCompaction(`summary ${i}`, "m0", `m${(i + 1) * 8 - 1}`);
    for (let k = 0; k < (i + 1) * 8; k++) covers.set(`m${k}`, id);
  }
  return covers;
}

/** The statements one search of `query` runs after a warm-up, and its hits checked against `covers`. */
async function searchStatements(
  counted: ReturnType<typeof countingStore>,
  query: string,
  covers: ReadonlyMap<string, string>,
  limit = 20,
): Promise<number> {
  const { store, count } = counted;
  await store.searchMessages(query, { sessionId: "s", limit });
  const before = count();
  const hits = await store.searchMessages(query, { sessionId: "s", limit });
  const spent = count() - before;
  assert.ok(hits.length > 0 && hits.length <= limit);
  for (const hit of hits) assert.equal(hit.compactedBy, covers.get(hit.id), hit.id);
  return spent;
}

async function forkStatements(b: number, query: string, limit?: number): Promise<number> {
  const counted = countingStore();
  try {
    return await searchStatements(counted, query, await forks(counted.store, b), limit);
  } finally {
    await counted.close();
  }
}

test("a search's overlay marks do not spend more statements as a message gathers forks with an overlay each", async (t) => {
  const sizes = (process.env.OVERLAY_MARKS_FORKS ?? "10,100").split(",").map(Number);
  const counts: number[] = [];
  for (const b of sizes) {
    // The newest forks' words, a page of 20 and of 200, and the oldest fork's.
    const spent = [
      await forkStatements(b, "fork"),
      await forkStatements(b, "fork", 200),
      await forkStatements(b, "oldest"),
    ];
    t.diagnostic(
      `statements of one search, ${b} forks: newest 20 ${spent[0]}, 200 ${spent[1]}, oldest ${spent[2]}`,
    );
    counts.push(...spent);
  }
  // The climbs take three statements at most, whatever the forks and the page (the oldest fork's hits, none of
  // whose overlays passes the first climb, need one fewer).
  const bound = Math.max(...counts.slice(0, 3));
  assert.ok(
    counts.every((count) => count <= bound),
    `${counts}`,
  );
});

test("nested overlays and a session without any: a few statements a search", async (t) => {
  const counted = countingStore();
  try {
    const withOverlays = await searchStatements(counted, "early", await nested(counted.store));
    const plain = countingStore();
    try {
      await chain(plain.store, "m", 120, null, "early note");
      const without = await searchStatements(plain, "early", new Map());
      t.diagnostic(`statements of one search: 12 nested overlays ${withOverlays}, no overlays ${without}`);
      // The overlays cost their read and one climb statement: on one path each hit's newest overlay holds it.
      assert.ok(withOverlays <= without + 2, `${withOverlays} against ${without}`);
    } finally {
      await plain.close();
    }
  } finally {
    await counted.close();
  }
});

test("marks on a random branched tree are the newest overlay whose range holds each hit along the tree", async () => {
  const next = rng(20261127);
  const store = new SqliteStore(":memory:");
  const session = store.session("s");
  // A deep trunk (so the climbs skip) with forks, some off other forks.
  const ids: string[] = [];
  const parentOf = new Map<string, string | null>();
  for (let i = 0; i < 400; i++) {
    const id = `m${i}`;
    const parent = i === 0 ? null : next() < 0.8 ? ids[i - 1]! : ids[Math.floor(next() * ids.length)]!;
    parentOf.set(id, parent);
    ids.push(id);
    await session.appendMessage(msg(id, `word ${i % 7 === 0 ? "seventh" : "other"}`), parent);
  }
  const pathTo = (leaf: string): string[] => {
    const path: string[] = [];
    for (let at: string | null | undefined = leaf; at; at = parentOf.get(at)) path.unshift(at);
    return path;
  };
  // More overlays than a search reads (SEARCH_OVERLAYS), nested from the root, spans of a branch, single messages.
  const overlays: { id: string; from: string; to: string }[] = [];
  for (let k = 0; k < SEARCH_OVERLAYS + 40; k++) {
    const path = pathTo(ids[Math.floor(next() * ids.length)]!);
    let [a, b] = [Math.floor(next() * path.length), Math.floor(next() * path.length)].sort((x, y) => x - y);
    if (next() < 0.2) a = 0;
    if (next() < 0.1) b = a!;
    const [from, to] = [path[a!]!, path[b!]!];
    overlays.push({ id: (await session.addCompaction(`summary ${k}`, from, to)).id, from, to });
  }
  const read = overlays.slice(-SEARCH_OVERLAYS).reverse();
  const expected = (hit: string) =>
    read.find(({ from, to }) => {
      const path = pathTo(to);
      const at = path.indexOf(hit);
      return at >= 0 && path.indexOf(from) <= at && path.includes(from);
    })?.id;
  for (const query of ["word", "seventh"]) {
    const hits = await store.searchMessages(query, { sessionId: "s", limit: 1000 });
    assert.ok(hits.length > 50, query);
    for (const hit of hits) assert.equal(hit.compactedBy, expected(hit.id), `${query}: ${hit.id}`);
    assert.ok(hits.some((hit) => hit.compactedBy !== undefined && hit.compactedBy !== read[0]!.id));
  }
  await store.close();
});
