// Which sessions an active-branch search keeps to their paths when it reads again: the shallowest first, the first
// always, within a bound of path rows and of reads.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ACTIVE_PATH_ROUNDS, ACTIVE_PATH_ROWS, ActivePaths } from "../src/search/active-paths.js";

test("sessions are kept to shallowest first, while their paths fit in the row bound", () => {
  const paths = new ActivePaths();
  const half = ACTIVE_PATH_ROWS / 2;
  assert.equal(
    paths.add([
      { num: 1, depth: half },
      { num: 2, depth: 10 },
      { num: 3, depth: half },
    ]),
    true,
  );
  // 11 rows, then 50,001: the third would pass the bound.
  assert.deepEqual(paths.kept, [2, 1]);
  // Sessions already kept add nothing; one that fits in what is left still does.
  assert.equal(paths.add([{ num: 1, depth: half }]), false);
  assert.equal(
    paths.add([
      { num: 4, depth: half - 20 },
      { num: 5, depth: half },
    ]),
    true,
  );
  assert.deepEqual(paths.kept, [2, 1, 4]);
});

test("the first session is kept to whatever its depth, and the reads are bounded", () => {
  const paths = new ActivePaths();
  assert.equal(paths.add([{ num: 1, depth: 10 * ACTIVE_PATH_ROWS }]), true);
  assert.equal(paths.add([{ num: 2, depth: 0 }]), false, "the bound is spent");
  const rounds = new ActivePaths();
  for (let i = 0; i < ACTIVE_PATH_ROUNDS; i++) assert.equal(rounds.add([{ num: i, depth: 1 }]), true);
  assert.equal(rounds.add([{ num: 99, depth: 1 }]), false, "the rounds are spent");
  assert.equal(new ActivePaths().add([]), false);
});
