// session_search with context (src/manager/hit-blocks.ts): hits whose turns overlap share one block, so the model
// reads each turn once; stretches that part (another branch, another session) stay apart.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { SearchResult } from "../../src/contract/search.js";
import { type HitBlock, hitBlocks } from "../../src/manager/hit-blocks.js";
import { formatSessionHits } from "../../src/manager/search-tools.js";

const turn = (id: string) => ({ id, role: "user", content: `text ${id}` });

/** A hit `id` with the turns `before` and `after` it (ids), in session `sessionId`. */
function hit(
  id: string,
  before: string[],
  after: string[],
  sessionId = "s",
  compactedBy?: string,
): SearchResult {
  return {
    ...turn(id),
    sessionId,
    context: { before: before.map(turn), after: after.map(turn) },
    ...(compactedBy === undefined ? {} : { compactedBy }),
  };
}

/** Each block as its turn ids, a hit's id in capitals. */
const shape = (blocks: HitBlock[]) =>
  blocks.map((block) => block.turns.map((t) => (t.hit ? t.id.toUpperCase() : t.id)).join(" "));

test("overlapping stretches share a block in conversation order, each hit marked once", () => {
  // b is the second hit and also a turn after the first; d's stretch starts inside the block.
  const blocks = hitBlocks([hit("b", ["a"], ["c"]), hit("c", ["b"], ["d"]), hit("x", ["w"], ["y"])]);
  assert.deepEqual(shape(blocks), ["a B C d", "w X y"]);
  // A stretch that starts before the block and ends inside it.
  assert.deepEqual(shape(hitBlocks([hit("c", ["b"], ["d"]), hit("a", ["z"], ["b"])])), ["z A b C d"]);
  // A stretch inside the block, and one around the whole block.
  assert.deepEqual(shape(hitBlocks([hit("c", ["a", "b"], ["d", "e"]), hit("d", ["c"], ["e"])])), [
    "a b C D e",
  ]);
  assert.deepEqual(shape(hitBlocks([hit("c", [], []), hit("d", ["b", "c"], ["e"])])), ["b C D e"]);
});

test("a stretch that reaches two blocks joins them, at the place of the better one", () => {
  const blocks = hitBlocks([
    hit("b", ["a"], ["c"]),
    hit("h", ["g"], ["i"]),
    hit("e", ["c", "d"], ["f", "g"]),
  ]);
  assert.deepEqual(shape(blocks), ["a B c d E f g H i"]);
});

test("stretches that part stay apart: another branch, another session, no shared turn", () => {
  // Two replies to b on different branches share a and b, then differ.
  assert.deepEqual(shape(hitBlocks([hit("x", ["a", "b"], []), hit("y", ["a", "b"], [])])), [
    "a b X",
    "a b Y",
  ]);
  // The same ids in another session.
  assert.deepEqual(shape(hitBlocks([hit("b", ["a"], ["c"]), hit("c", ["b"], [], "t")])), ["a B c", "b C"]);
  // Hits without context are results of their own, even the same message twice (the reference's strings).
  const bare: SearchResult = { ...turn("a"), sessionId: "s" };
  assert.deepEqual(shape(hitBlocks([bare, bare, hit("a", [], ["b"])])), ["A", "A", "A b"]);
  // Adjacent but not overlapping: turns are not known to follow each other.
  assert.deepEqual(shape(hitBlocks([hit("b", ["a"], []), hit("d", ["c"], [])])), ["a B", "c D"]);
});

test("session_search shows every turn once, the hits marked and a covering summary named", () => {
  const out = formatSessionHits([
    hit("b", ["a"], ["c"], "s", "sum1"),
    hit("c", ["b"], ["d"]),
    hit("x", [], []),
  ]);
  assert.equal(
    out,
    [
      "  [user] text a",
      "> [user] text b (replaced by summary sum1)",
      "> [user] text c",
      "  [user] text d",
      "---",
      "> [user] text x",
    ].join("\n"),
  );
  // Without context the reference's strings stay, a covered hit included.
  const plain = (id: string, compactedBy?: string): SearchResult => ({
    ...turn(id),
    sessionId: "s",
    ...(compactedBy === undefined ? {} : { compactedBy }),
  });
  assert.equal(formatSessionHits([plain("a"), plain("b")]), "[user] text a\n---\n[user] text b");
  assert.equal(formatSessionHits([plain("a"), plain("b", "sum1")]), "[user] text a\n---\n[user] text b");
});
