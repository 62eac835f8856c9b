// The fact channel's fusion as pure functions (docs/FACTS.md#recall): which facts take part, and the fused order,
// checked against its definition (a sort of every seq by its fused score, ties in the turn order).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Fact, FactHit } from "../../src/contract/facts.js";
import { factShare, fuseFacts } from "../../src/search/fact-fusion.js";
import { FACT_RRF_K, FACT_VECTOR_WEIGHT, fuseFactLists, relevantFacts } from "../../src/search/facts.js";

const fact = (id: string): Fact => ({
  id,
  text: id,
  about: null,
  observedAt: 0,
  sources: [{ sessionId: "s", messageId: id }],
  producer: "test",
  owner: null,
  sessionId: "s",
  status: "current",
  supersededBy: null,
  createdAt: 0,
});
const hit = (id: string, matched: number | undefined, rank: number): FactHit =>
  matched === undefined ? { fact: fact(id), score: 1, rank } : { fact: fact(id), score: 1, rank, matched };

// The definition: every seq scored, one sort.
function fusedByDefinition(order: number[], lifts: number[][]): number[] {
  const lift = new Map<number, number>();
  let i = 0;
  for (const seqs of lifts) {
    if (seqs.length === 0) continue;
    const share = factShare(i++);
    for (const seq of seqs) if (!lift.has(seq)) lift.set(seq, share);
  }
  const all = order.map((seq, place) => ({
    seq,
    place,
    score: 1 / (FACT_RRF_K + place + 1) + (lift.get(seq) ?? 0),
  }));
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
    }
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
