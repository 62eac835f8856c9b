// The fact channel's subject rule (docs/FACTS.md#recall): a question naming one of the facts' subjects takes the
// facts about it (and those about no one) before the facts about another subject, each part in its order.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { FactHit } from "../../src/contract/facts.js";
import { subjectFirst } from "../../src/search/fact-subject.js";
import { storedFact } from "./helpers.js";

const hit = (id: string, about: string | null, rank: number): FactHit => ({
  fact: storedFact(id, about),
  score: 1,
  rank,
  matched: 2,
});

const hits = [
  hit("c1", "Caroline", 1),
  hit("none", null, 2),
  hit("m1", "Melanie", 3),
  hit("c2", "caroline", 4),
  hit("m2", "Melanie", 5),
];
const order = (list: readonly FactHit[]) => list.map(({ fact, rank }) => `${fact.id}@${rank}`);

describe("subjectFirst", () => {
  test("a question naming one subject takes its facts and those about no one first, renumbered", () => {
    assert.deepEqual(order(subjectFirst(hits, "What did Melanie's kids paint?")), [
      "none@1",
      "m1@2",
      "m2@3",
      "c1@4",
      "c2@5",
    ]);
    // Folded as the query's words are: case and diacritics do not make another subject.
    assert.deepEqual(order(subjectFirst(hits, "what did CAROLINE paint")), [
      "c1@1",
      "none@2",
      "c2@3",
      "m1@4",
      "m2@5",
    ]);
  });

  test("no subject named, or several: the order is the words'", () => {
    for (const question of ["What was painted?", "What did Caroline and Melanie paint?", "Mel's painting?"])
      assert.deepEqual(order(subjectFirst(hits, question)), order(hits));
  });

  test("a subject of several words is named by all of them", () => {
    const two = [hit("x", "Dana Smith", 1), hit("y", "Lee", 2), hit("z", "Dana Smith", 3)];
    assert.deepEqual(order(subjectFirst(two, "What does Dana do?")), ["x@1", "y@2", "z@3"]);
    assert.deepEqual(order(subjectFirst(two, "What does Lee think of Dana?")), ["y@1", "x@2", "z@3"]);
    assert.deepEqual(order(subjectFirst(two, "Where does Dana Smith work?")), ["x@1", "z@2", "y@3"]);
  });

  test("an about with no word names no subject; an empty list stays empty", () => {
    assert.deepEqual(order(subjectFirst([hit("p", "!!", 1), hit("q", "Lee", 2)], "!! and Lee")), [
      "p@1",
      "q@2",
    ]);
    assert.deepEqual(subjectFirst([], "Lee"), []);
  });
});
