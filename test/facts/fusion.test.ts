// The fact channel's fusion as pure functions (docs/FACTS.md#recall): which facts take part, and the fused order,
// checked against its definition (a sort of every seq by its fused score, ties in the turn order).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Fact, FactHit } from "../../src/contract/facts.js";
import { factShare, fuseFacts, isStrongFact, STRONG_FACT_WEIGHT } from "../../src/search/fact-fusion.js";
import { BELOW_BEST_FACT_FACTOR, factTierFactor } from "../../src/search/fact-weights.js";
import { FACT_RRF_K, FACT_VECTOR_WEIGHT, fuseFactLists, relevantFacts } from "../../src/search/facts.js";
import { storedFact } from "./helpers.js";

const fact = (id: string): Fact => storedFact(id);
const hit = (id: string, matched: number | undefined, rank: number): FactHit =>
  matched === undefined ? { fact: fact(id), score: 1, rank } : { fact: fact(id), score: 1, rank, matched };

// The definition: every seq scored, one sort. A seq takes its first fact's share (0.5 / (k + i)); a turn that matches
// a term (`matched` by place) named by a strong fact (as many terms as the best turn) scores at most the turn's share
// plus the first strong fact's 1 / (k + i), capped by every earlier turn that matches more, never below the former.
// A fact matching fewer terms than the best fact taking part gives half of either share.
function fusedByDefinition(
  order: number[],
  lifts: number[][],
  facts: { matched: number[]; turnMatched: number; matchedAt: number[] } = {
    matched: [],
    turnMatched: 0,
    matchedAt: [],
  },
): number[] {
  const lift = new Map<number, number>();
  const strong = new Map<number, number>();
  const counts = lifts.flatMap((seqs, k) =>
    seqs.length > 0 && facts.matched[k] !== undefined ? [facts.matched[k]] : [],
  );
  const best = Math.max(...counts);
  let i = 0;
  for (const [k, seqs] of lifts.entries()) {
    if (seqs.length === 0) continue;
    const place = i++;
    const isStrong = facts.turnMatched > 0 && (facts.matched[k] ?? 0) >= facts.turnMatched;
    const weight = (facts.matched[k] ?? best) < best ? 0.5 : 1;
    for (const seq of seqs) {
      if (!lift.has(seq)) lift.set(seq, (weight * 0.5) / (FACT_RRF_K + place + 1));
      if (isStrong && !strong.has(seq)) strong.set(seq, weight / (FACT_RRF_K + place + 1));
    }
  }
  const all: { seq: number; place: number; score: number }[] = [];
  for (const [place, seq] of order.entries()) {
    const own = 1 / (FACT_RRF_K + place + 1);
    let score = own + (lift.get(seq) ?? 0);
    const matched = facts.matchedAt[place] ?? 0;
    if (strong.has(seq) && matched > 0) {
      const more = all.filter((a) => (facts.matchedAt[a.place] ?? 0) > matched).map((a) => a.score);
      score = Math.max(score, Math.min(own + strong.get(seq)!, ...more));
    }
    all.push({ seq, place, score });
  }
  for (const [seq, share] of lift)
    if (!order.includes(seq)) all.push({ seq, place: Number.MAX_SAFE_INTEGER, score: share });
  all.sort((a, b) => b.score - a.score || a.place - b.place || b.seq - a.seq);
  return all.map(({ seq }) => seq);
}

describe("fact fusion", () => {
  test("facts matching fewer query terms than the best one less one take no part; ranks are renumbered", () => {
    const kept = relevantFacts([hit("a", 3, 1), hit("b", 2, 2), hit("c", 1, 3), hit("d", 2, 4)]);
    assert.deepEqual(
      kept.map((h) => [h.fact.id, h.rank]),
      [
        ["a", 1],
        ["b", 2],
        ["d", 3],
      ],
    );
  });

  test("a store that does not say how many terms a fact matches keeps all its facts", () => {
    const kept = relevantFacts([hit("a", undefined, 1), hit("b", undefined, 2)]);
    assert.deepEqual(
      kept.map((h) => h.fact.id),
      ["a", "b"],
    );
  });

  test("the fused order is the sort of every seq by its fused score, ties in the turn order", () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const order = [...new Set(Array.from({ length: random(60) }, () => random(100)))];
      const lifts = Array.from({ length: random(12) }, () =>
        Array.from({ length: random(4) }, () => random(120)).filter((seq, i, all) => all.indexOf(seq) === i),
      );
      const { seqs, scores } = fuseFacts(order, { hits: [], seqs: lifts });
      assert.deepEqual(seqs, fusedByDefinition(order, lifts));
      for (const seq of seqs) assert.ok(scores.get(seq) !== undefined);
      for (let i = 1; i < seqs.length; i++) assert.ok(scores.get(seqs[i - 1]!)! >= scores.get(seqs[i]!)!);
      // With counts: the strong facts' lifts, capped by the turns that match more.
      const matched = lifts.map(() => 1 + random(4));
      const turnMatched = 1 + random(4);
      const matchedAt = order.map(() => random(5));
      const hits = lifts.map((_, k) => hit(`f${k}`, matched[k], k + 1));
      const strong = fuseFacts(order, { hits, seqs: lifts, turnMatched }, (rank) => matchedAt[rank]!);
      assert.deepEqual(strong.seqs, fusedByDefinition(order, lifts, { matched, turnMatched, matchedAt }));
      for (let i = 1; i < strong.seqs.length; i++)
        assert.ok(strong.scores.get(strong.seqs[i - 1]!)! >= strong.scores.get(strong.seqs[i]!)!);
    }
  });

  test("a strong fact weighs as a turn for a turn that matches a word, never past a turn before it matching more", () => {
    assert.equal(isStrongFact(3, 3), true);
    assert.equal(isStrongFact(4, 3), true);
    assert.equal(isStrongFact(2, 3), false);
    // Unknown counts (a fact only the vectors found, a store that does not count; no turn matched): not strong.
    assert.equal(isStrongFact(undefined, 3), false);
    assert.equal(isStrongFact(3, undefined), false);
    assert.equal(isStrongFact(0, 0), false);
    // Twelve turns: the first matches 2 terms, the rest 1; a fact at the first place names turn 12 and turn 99
    // (which no word reaches).
    const order = Array.from({ length: 12 }, (_, i) => i + 1);
    const matchedAt = (rank: number) => (rank === 0 ? 2 : 1);
    const fused = (matched: number) =>
      fuseFacts(order, { hits: [hit("a", matched, 1)], seqs: [[12, 99]], turnMatched: 2 }, matchedAt).seqs;
    // Strong: turn 12 passes the ten that match as much and stays after turn 1; turn 99 keeps the 0.5 share
    // (0.5 / (k + 1), as much as the 7th turn's 1 / (k + 7): after it, ties keep the turn order).
    assert.deepEqual(fused(2), [1, 12, 2, 3, 4, 5, 6, 7, 99, 8, 9, 10, 11]);
    // Weak (fewer terms than the best turn): the 0.5 share alone, turn 12 passes fewer.
    assert.deepEqual(fused(1).slice(0, 3), [1, 2, 12]);
    // No counts of the turns: no fact is strong.
    assert.deepEqual(
      fuseFacts(order, { hits: [hit("a", 2, 1)], seqs: [[12, 99]], turnMatched: 2 }).seqs,
      fused(1),
    );
    assert.equal(factShare(0, STRONG_FACT_WEIGHT), 2 * factShare(0));
  });

  test("a fact matching fewer terms than the best fact lifts its turns by half its share", () => {
    // Ten turns; fact a (3 terms) names turn 10, fact b (2 terms, below the best) names turn 5.
    const order = Array.from({ length: 10 }, (_, i) => i + 1);
    const lifts = [[10], [5]];
    const fused = (matchedB: number | undefined) =>
      fuseFacts(order, { hits: [hit("a", 3, 1), hit("b", matchedB, 2)], seqs: lifts }).seqs;
    // b at its whole share (as many terms as a): 1 / (k + 5) + 0.5 / (k + 2) passes the first turn.
    assert.deepEqual(fused(3).slice(0, 3), [5, 1, 10]);
    // b one term short: half of it, 1 / (k + 5) + 0.25 / (k + 2) passes the third and fourth turns, not the first
    // two (nor turn 10, lifted by a at its whole share).
    assert.deepEqual(fused(2).slice(0, 5), [1, 10, 2, 5, 3]);
    // A count unknown (a fact only the vectors found) keeps the whole share.
    assert.deepEqual(fused(undefined).slice(0, 3), [5, 1, 10]);
    assert.equal(factTierFactor(2, 3), BELOW_BEST_FACT_FACTOR);
    assert.equal(factTierFactor(3, 3), 1);
    assert.equal(factTierFactor(undefined, 3), 1);
    assert.equal(factTierFactor(2, undefined), 1);
  });

  test("the facts' word and vector rankings fuse by reciprocal rank; one only the vectors find joins at its share", () => {
    const words = [hit("a", 2, 1), hit("b", 2, 2), hit("c", 1, 3)];
    const near = [hit("c", undefined, 1), hit("z", undefined, 2)];
    const fused = fuseFactLists(words, near);
    const share = (rank: number) => 1 / (FACT_RRF_K + rank);
    const expected = [
      ["c", share(3) + FACT_VECTOR_WEIGHT * share(1)],
      ["a", share(1)],
      ["b", share(2)],
      ["z", FACT_VECTOR_WEIGHT * share(2)],
    ].sort((x, y) => (y[1] as number) - (x[1] as number));
    assert.deepEqual(
      fused.map((h) => [h.fact.id, h.score, h.rank]),
      expected.map(([id, score], i) => [id, score, i + 1]),
    );
    // No vector list: the word list as it was.
    assert.deepEqual(fuseFactLists(words, []), words);
  });
});
