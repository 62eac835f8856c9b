import assert from "node:assert/strict";
import { test } from "node:test";
import { firstInOrder } from "../src/search/first-in-order.js";

// A small seeded generator, so a failure names the case that made it.
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

test("firstInOrder gives exactly the sorted array's first k, for every k, with ties broken as the order says", () => {
  for (let seed = 1; seed <= 200; seed++) {
    const next = random(seed);
    const n = Math.floor(next() * 60);
    // Few distinct keys, so most comparisons tie on the key and fall to the index.
    const keys = Array.from({ length: n }, () => Math.floor(next() * 5));
    const items = keys.map((_, i) => i);
    const compare = (a: number, b: number) => keys[b]! - keys[a]! || a - b;
    const sorted = [...items].sort(compare);
    for (const k of [0, 1, 2, 5, 20, n - 1, n, n + 3]) {
      if (k < 0) continue;
      assert.deepEqual(firstInOrder(items, compare, k), sorted.slice(0, k), `seed ${seed}, n ${n}, k ${k}`);
    }
  }
});

test("firstInOrder leaves its input as it was", () => {
  const items = [5, 3, 9, 1];
  assert.deepEqual(
    firstInOrder(items, (a, b) => a - b, 2),
    [1, 3],
  );
  assert.deepEqual(items, [5, 3, 9, 1]);
});
