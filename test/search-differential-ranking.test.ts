// The seeded differential corpus again (test/helpers/search-corpus.ts), checked against the ranking's rules rather
// than only backend against backend (a Citus cluster among them when there is one): every backend orders ranked recall by the term-count tiers that an oracle
// computes from single-term searches and the stored tree (src/search/rank.ts's rules, written again here); a role
// or time filter only hides hits (the filtered search is the unfiltered one without them, in the same order, since a
// filtered-out turn still lends its weight to its neighbours); and the turns around each hit and the overlay that
// covers it are the same everywhere.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { SearchOptions, SearchResult, StoreSearchOptions } from "../src/contract/search.js";
import type { SessionStore } from "../src/contract/store.js";
import { hasTransfer } from "../src/contract/transfer.js";
import { storedMessageText } from "../src/message/text.js";
import { recallTerms, TEXTLESS_RUN } from "../src/search/rank.js";
import { indexTokens } from "../src/search/tokens.js";
import { citusStores } from "./fixtures/citus-db.js";
import { pgliteUnlessSwitchedOff } from "./fixtures/postgres-db.js";
import { rng } from "./helpers/rng.js";
import { corpusStores, queries, SESSIONS, WORDS } from "./helpers/search-corpus.js";

type Scope = Pick<StoreSearchOptions, "sessionId" | "branch">;
const SCOPES: Scope[] = [{}, { sessionId: "s1" }, { branch: "active" }];
const key = (hit: SearchResult) => `${hit.sessionId}/${hit.id}`;

// Queries of several English words, so hits fall into many tiers (the corpus's own queries have one or two words).
const rand = rng(20261125);
const ENGLISH = WORDS.slice(0, 6).flat();
const SEVERAL = Array.from({ length: 40 }, () =>
  Array.from({ length: 2 + Math.floor(rand() * 3) }, () => ENGLISH[Math.floor(rand() * ENGLISH.length)]).join(
    " ",
  ),
);

/**
 * The turn before every stored message by key, as ranking sees the tree the store holds (after deletes spliced it):
 * its parent, or, where that has no searchable text, its nearest ancestor with text through a run of at most
 * TEXTLESS_RUN messages without (null: none).
 */
async function parentsOf(store: SessionStore): Promise<Map<string, string | null>> {
  assert.ok(hasTransfer(store), `${store.backend} can export`);
  const parents = new Map<string, string | null>();
  const textless = new Set<string>();
  for (const session of SESSIONS) {
    for await (const item of store.transfer.exportSession(session)) {
      if (item.kind !== "message") continue;
      const { id, parentId } = item.message;
      parents.set(`${session}/${id}`, parentId === null ? null : `${session}/${parentId}`);
      if (indexTokens(storedMessageText(item.message.content)).length === 0) textless.add(`${session}/${id}`);
    }
  }
  const turnBefore = (k: string) => {
    let parent = parents.get(k) ?? null;
    for (let run = 0; parent !== null && textless.has(parent); run++) {
      if (run === TEXTLESS_RUN) return null;
      parent = parents.get(parent) ?? null;
    }
    return parent;
  };
  assert.ok(textless.size >= 10, `${store.backend}: ${textless.size} messages without text`);
  return new Map([...parents.keys()].map((k) => [k, turnBefore(k)]));
}

const bits = (mask: number) => mask.toString(2).replaceAll("0", "").length;

/**
 * Each candidate's tiers (exchange count × 256 + own count) for a query of two or more plain words, or undefined
 * for another query. A term's matches are what the term alone finds; a candidate's neighbours are the turn before it
 * and the turns after it (parentsOf) that are candidates too, and its exchange adds the neighbours of those
 * neighbours.
 */
async function oracleTiers(
  store: SessionStore,
  query: string,
  scope: Scope,
  parents: ReadonlyMap<string, string | null>,
): Promise<Map<string, number> | undefined> {
  const terms = recallTerms(query);
  if (terms.length < 2) return undefined;
  const masks = new Map<string, number>();
  for (const [i, term] of terms.entries()) {
    if (term.kind !== "word" || !/^\p{L}+$/u.test(term.word)) return undefined;
    for (const hit of await store.searchMessages(term.word, { ...scope, limit: 1000 })) {
      masks.set(key(hit), (masks.get(key(hit)) ?? 0) | (1 << i));
    }
  }
  const neighbours = new Map<string, string[]>([...masks.keys()].map((k) => [k, []]));
  for (const k of masks.keys()) {
    const parent = parents.get(k);
    if (parent === null || parent === undefined || !masks.has(parent)) continue;
    neighbours.get(k)!.push(parent);
    neighbours.get(parent)!.push(k);
  }
  const near = (k: string) => neighbours.get(k)!.reduce((mask, j) => mask | masks.get(j)!, 0);
  const tiers = new Map<string, number>();
  for (const [k, mask] of masks) {
    let exchange = mask | near(k);
    for (const j of neighbours.get(k)!) exchange |= near(j);
    tiers.set(k, bits(exchange) * 256 + bits(mask));
  }
  return tiers;
}

const pglite = await pgliteUnlessSwitchedOff();
// The cluster too (a distributed store must answer as one server does); skipped with the reason without one.
const citus = await citusStores("differential_ranking");
let stores: { name: string; store: SessionStore }[] = [];
before(async () => {
  stores = await corpusStores(pglite, "differential_ranking", citus);
});
after(async () => {
  for (const { store } of stores) await store.close();
  await pglite?.close();
});

test("every backend orders ranked recall by the tiers an oracle computes from the tree", async () => {
  for (const { name, store } of stores) {
    const parents = await parentsOf(store);
    let checked = 0;
    let tiered = 0;
    for (const query of [...queries, ...SEVERAL]) {
      for (const scope of SCOPES) {
        const tiers = await oracleTiers(store, query, scope, parents);
        if (tiers === undefined) continue;
        const hits = await store.searchMessages(query, { ...scope, limit: 1000 });
        const where = `${name}: ${JSON.stringify(query)} ${JSON.stringify(scope)}`;
        assert.deepEqual(hits.map(key).sort(), [...tiers.keys()].sort(), `${where}: the candidates`);
        const order = hits.map((hit) => tiers.get(key(hit))!);
        const wrong = order.findIndex((tier, i) => i > 0 && tier > order[i - 1]!);
        assert.equal(wrong, -1, `${where}: hit ${wrong} ranks above its tier (${order.join(" ")})`);
        checked++;
        if (new Set(order).size > 2) tiered++;
      }
    }
    // The check is not vacuous: many queries, and many of them with hits in three tiers or more.
    assert.ok(checked >= 100 && tiered >= 30, `${name}: ${checked} queries checked, ${tiered} with 3+ tiers`);
  }
});

test("a role or time filter only hides hits: the rest keep their order on every backend", async () => {
  for (const { name, store } of stores) {
    for (const query of [...queries.slice(20), ...SEVERAL]) {
      const all = await store.searchMessages(query, { limit: 1000 });
      if (all.length < 2) continue;
      const times = all.map((hit) => hit.createdAt!).sort();
      const cut = times[Math.floor(times.length / 2)]!;
      const filters: [SearchOptions, (hit: SearchResult) => boolean][] = [
        [{ role: "assistant" }, (hit) => hit.role === "assistant"],
        [{ role: ["user"] }, (hit) => hit.role === "user"],
        [{ since: cut }, (hit) => hit.createdAt! >= cut],
        [{ until: cut }, (hit) => hit.createdAt! < cut],
      ];
      for (const [filter, keeps] of filters) {
        const filtered = await store.searchMessages(query, { ...filter, limit: 1000 });
        assert.deepEqual(
          filtered.map(key),
          all.filter(keeps).map(key),
          `${name}: ${JSON.stringify(query)} ${JSON.stringify(filter)}`,
        );
      }
    }
  }
});

/** Each hit with the turns around it and the range of the overlay covering it, one line per query, sorted. */
async function contextLines(store: SessionStore): Promise<string[]> {
  const overlays = new Map<string, string>();
  for (const session of SESSIONS) {
    for (const overlay of await store.session(session).getCompactions()) {
      overlays.set(overlay.id, `${overlay.fromMessageId}..${overlay.toMessageId}`);
    }
  }
  assert.ok(overlays.size > 0, `${store.backend}: the corpus has overlays`);
  const lines: string[] = [];
  // The branch scopes only: a session filter changes no hit's turns.
  for (const query of [...queries, ...SEVERAL.slice(0, 10)]) {
    for (const scope of [{}, { branch: "active" as const }]) {
      const hits = await store.searchMessages(query, { ...scope, context: 2, limit: 1000 });
      const described = hits.map((hit) => {
        const turns = (side: readonly { id: string }[] = []) => side.map((turn) => turn.id).join(",");
        const covered = hit.compactedBy === undefined ? "" : ` in ${overlays.get(hit.compactedBy)}`;
        return `${key(hit)} [${turns(hit.context?.before)} | ${turns(hit.context?.after)}]${covered}`;
      });
      lines.push(`${JSON.stringify(query)} ${JSON.stringify(scope)}: ${described.sort().join("; ")}`);
    }
  }
  return lines;
}

test("every backend gives the same turns around each hit and names the same covering overlay", async () => {
  const [reference, ...others] = stores;
  const expected = await contextLines(reference!.store);
  assert.ok(
    expected.some((line) => line.includes(" in m")),
    "some hits are covered by an overlay",
  );
  for (const { name, store } of others) {
    const actual = await contextLines(store);
    const differing = actual.filter((line, i) => line !== expected[i]).slice(0, 3);
    assert.deepEqual(differing, [], `${name} differs from ${reference!.name}:\n${differing.join("\n")}`);
  }
});
