// The active-path rounds of ranked recall, decided once in search/pipeline.ts: a source answers reads and which
// sessions crowded them, and the pipeline reads again only for an active-branch search whose window was full and
// held too few hits, within the bounds of search/active-paths.ts, the same for engines that answer at once or later.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { StoreSearchOptions } from "../src/contract/search.js";
import { ACTIVE_PATH_ROUNDS } from "../src/search/active-paths.js";
import { searchPlan } from "../src/search/options.js";
import { type RecallSource, recall, recallAsync, scoresOf } from "../src/search/pipeline.js";
import { recallTerms } from "../src/search/rank.js";

/** What a fake source read: its candidates' seqs, and the sessions kept to their paths when they were read. */
interface Reads {
  seqs: number[];
  paths: readonly number[];
}

/**
 * A source whose first read holds `first` (seqs) in a full window; each read again adds `found` hits and names a
 * crowding session of its own (the number of the round), so every round has one to keep to. `calls` logs the reads.
 */
function fakeSource(first: number[], found: number, calls: string[], full = true) {
  const source: RecallSource<true, Reads, number[]> = {
    scope: () => true,
    read: () => {
      calls.push("read");
      return { seqs: first, paths: [] };
    },
    rank: ({ seqs }) => {
      const ranked = seqs.map((seq) => ({ seq, score: seq, matched: 1, window: 1 }));
      return { ranked, scores: scoresOf(ranked) };
    },
    pageMaySkip: () => true,
    page: (seqs, _scores, plan) => seqs.slice(0, plan.limit),
    rereads: {
      full: () => full,
      found: (_reads, { ranked }) => ranked.length,
      branched: ({ paths }) => [{ num: paths.length + 1, depth: 1 }],
      reread: ({ seqs }, _scope, _plan, paths) => {
        calls.push(`reread ${paths.join(",")}`);
        const more = Array.from({ length: found }, (_, i) => 1000 * paths.length + i);
        return { seqs: [...seqs, ...more], paths };
      },
    },
  };
  return source;
}

const plan = (options: StoreSearchOptions) => searchPlan({ limit: 3, ...options });
const terms = recallTerms("harbour");

test("an active-branch search whose full window held too few hits reads again, keeping the crowding sessions", () => {
  const calls: string[] = [];
  const hits = recall(fakeSource([1], 1, calls), terms, plan({ branch: "active" }));
  // Round one keeps session 1 (2 hits: short), round two sessions 1 and 2 (3 hits: enough).
  assert.deepEqual(calls, ["read", "reread 1", "reread 1,2"]);
  assert.deepEqual(hits, [1, 1000, 2000]);
});

test("the rounds are bounded, and an async source runs the same rounds", async () => {
  const calls: string[] = [];
  const { rereads, ...rest } = fakeSource([], 0, calls);
  const source: RecallSource<true, Reads, number[], Promise<Reads>> = {
    ...rest,
    read: async (...args) => rest.read(...args),
    rereads: { ...rereads!, reread: async (...args) => rereads!.reread(...args) },
  };
  assert.deepEqual(await recallAsync(source, terms, plan({ branch: "active" })), []);
  assert.equal(calls.filter((call) => call.startsWith("reread")).length, ACTIVE_PATH_ROUNDS);
});

test("no read again where the window was not full, all branches are searched, or enough was found", () => {
  for (const [options, full, first] of [
    [{ branch: "active" }, false, [1]],
    [{ branch: "all" }, true, [1]],
    [{ branch: "active" }, true, [1, 2, 3]],
  ] as const) {
    const calls: string[] = [];
    recall(fakeSource([...first], 1, calls, full), terms, plan(options));
    assert.deepEqual(calls, ["read"], JSON.stringify(options));
  }
});
