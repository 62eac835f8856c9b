import assert from "node:assert/strict";
import { test } from "node:test";
import { fuseRankings, RRF_K, type TextRanked } from "../src/search/fusion.js";

// Hybrid fusion (src/search/fusion.ts): the text ranking's term-count tiers stay; within a tier the BM25 order and
// the vector order are fused by reciprocal rank; a message only the vectors find ranks with one-term matches.

const text = (seq: number, window: number, matched: number): TextRanked => ({ seq, window, matched });

test("a message matching more query terms stays above one the vectors prefer", () => {
  const ranked = [text(1, 3, 3), text(2, 2, 2), text(3, 1, 1)];
  const { seqs } = fuseRankings(ranked, [3, 2, 1]);
  assert.deepEqual(seqs, [1, 2, 3]);
});

test("within a tier the vector channel reorders by reciprocal rank", () => {
  // One tier of three (BM25 order 1, 2, 3); the vectors put 3 first: 3 gets 1/(k+3) + 1/(k+1), 1 only 1/(k+1).
  const ranked = [text(1, 2, 1), text(2, 2, 1), text(3, 2, 1)];
  const { seqs, scores } = fuseRankings(ranked, [3]);
  assert.deepEqual(seqs, [3, 1, 2]);
  assert.equal(scores.get(3), 1 / (RRF_K + 3) + 1 / (RRF_K + 1));
  // The rank counts within the tier: the first of a lower tier scores like the first of the top one.
  const two = fuseRankings([text(1, 2, 2), text(2, 1, 1)], []);
  assert.equal(two.scores.get(2), two.scores.get(1));
  assert.deepEqual(two.seqs, [1, 2]);
});

test("a message only the vectors find ranks with the messages that match one term by themselves", () => {
  const ranked = [text(1, 2, 2), text(2, 2, 1), text(3, 1, 1), text(5, 1, 1), text(4, 1, 0)];
  const { seqs } = fuseRankings(ranked, [9, 4]);
  // 9 (vector rank 1) joins tier (1, 1): it ties with 3 (BM25 rank 1 there; a tie keeps the text's order) and
  // outranks 5; it stays below the tiers (2, *) and above the neighbour-only match 4, vector rank 2 or not.
  assert.deepEqual(seqs, [1, 2, 3, 9, 5, 4]);
  // No text candidate at all: the vector order is the answer.
  assert.deepEqual(fuseRankings([], [7, 5, 6]).seqs, [7, 5, 6]);
});
