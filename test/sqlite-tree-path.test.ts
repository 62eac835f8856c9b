// The batched path check (onPaths: climbs, or one read of the path) against the row-by-row skip-pointer walk
// (isAncestor), on a tree deep enough for the pointers to skip and branched enough for most messages to be off a
// given path.
import assert from "node:assert/strict";
import { test } from "node:test";
import { isAncestor, nodeBySeq, onPaths } from "../src/sql/engines/sqlite/tree.js";
import { SqliteStore } from "../src/sqlite/store.js";

// A seeded generator, so a failure names the same tree every run.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

test("onPaths answers what the skip-pointer walk answers, for every message against every leaf", async () => {
  const store = new SqliteStore(":memory:");
  const session = store.session("tree");
  const next = random(7);
  const ids: string[] = [];
  for (let i = 0; i < 400; i++) {
    // Mostly a chain (depth for the pointers to skip), sometimes a branch from anywhere before.
    const parent =
      ids.length === 0 ? null : next() < 0.9 ? ids[ids.length - 1]! : ids[Math.floor(next() * ids.length)]!;
    const id = `m${i}`;
    await session.appendMessage({ id, role: "user", parts: [{ type: "text", text: id }] }, parent);
    ids.push(id);
  }
  const driver = store.driver;
  const seqs = driver.column<number>("SELECT seq FROM agent_messages ORDER BY seq");
  const leaves = driver.column<number>(
    "SELECT seq FROM agent_messages m WHERE NOT EXISTS (SELECT 1 FROM agent_messages c WHERE c.parent_seq = m.seq)",
  );
  assert.ok(leaves.length > 10, "the tree branches");
  let onPath = 0;
  const mixed: [number, number][] = [];
  const mixedExpected = new Set<string>();
  for (const leafSeq of leaves) {
    const leaf = nodeBySeq(driver, leafSeq)!;
    const expected = seqs.filter((seq) => isAncestor(driver, nodeBySeq(driver, seq)!, leaf));
    const pairs = seqs.map((seq): [number, number] => [seq, leafSeq]);
    const sorted = (found: Set<number>) => [...found].sort((a, b) => a - b);
    assert.deepEqual(sorted(onPaths(driver, pairs)), expected, `leaf ${leafSeq}`);
    // Knowing the leaf's depth, this many messages read the whole path once instead of climbing: the same answer.
    const walked = onPaths(driver, pairs, new Map([[leafSeq, leaf.depth]]));
    assert.deepEqual(sorted(walked), expected, `leaf ${leafSeq}, path read`);
    onPath += expected.length;
    // One message per leaf in a call that mixes leaves.
    const seq = seqs[(leafSeq * 7) % seqs.length]!;
    mixed.push([seq, leafSeq]);
    if (expected.includes(seq)) mixedExpected.add(`${seq}/${leafSeq}`);
  }
  assert.ok(onPath > 0 && onPath < seqs.length * leaves.length);
  // Mixed leaves: a message on one leaf's path is not thereby on another's (only distinct seqs are asked here).
  const distinct = mixed.filter(([seq], i) => mixed.findIndex(([other]) => other === seq) === i);
  const answered = onPaths(driver, distinct);
  for (const [seq, leafSeq] of distinct) {
    assert.equal(
      answered.has(seq),
      mixedExpected.has(`${seq}/${leafSeq}`),
      `message ${seq}, leaf ${leafSeq}`,
    );
  }
  // A message that is not stored is on no path; no pairs, no statement.
  assert.deepEqual([...onPaths(driver, [[10_000, leaves[0]!]])], []);
  assert.deepEqual([...onPaths(driver, [])], []);
  await store.close();
});
