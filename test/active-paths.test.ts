// Which sessions an active-branch search keeps to their paths when it reads again: the shallowest first, the first
// always, within a bound of path rows and of reads; and the strict search's growing window and its rounds.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ACTIVE_PATH_ROUNDS,
  ACTIVE_PATH_ROWS,
  ActivePaths,
  growingWindow,
  keepWindowToActivePaths,
  type WindowRead,
} from "../src/search/active-paths.js";

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

/** A window read over `matches` ranked matches of which every `every`-th is a hit; `windows` logs the sizes read. */
function windowReads(matches: number, every: number, windows: number[]) {
  return async (window: number): Promise<WindowRead> => {
    windows.push(window);
    const held = Math.min(window, matches);
    return { found: Math.floor(held / every), held, full: false };
  };
}

test("the strict search's window grows x4 from 4 x limit (at least 40) until it holds enough or every match", async () => {
  const windows: number[] = [];
  const active = { limit: 10, activeOnly: true };
  // One hit in 50: 40 hold none, 160 three, 640 twelve.
  assert.equal((await growingWindow(active, 2000, windowReads(5000, 50, windows))).found, 12);
  assert.deepEqual(windows, [40, 160, 640]);
  // Capped at the candidates, and it stops past the last match.
  windows.length = 0;
  await growingWindow(active, 2000, windowReads(5000, 1000, windows));
  assert.deepEqual(windows, [40, 160, 640, 2000]);
  windows.length = 0;
  await growingWindow(active, 2000, windowReads(100, 1000, windows));
  assert.deepEqual(windows, [40, 160]);
  windows.length = 0;
  await growingWindow({ limit: 30, activeOnly: true }, 70, windowReads(70, 1000, windows));
  assert.deepEqual(windows, [70]);
  // Where every hit counts, one window of the limit.
  windows.length = 0;
  await growingWindow({ limit: 10, activeOnly: false }, 2000, windowReads(5000, 1, windows));
  assert.deepEqual(windows, [10]);
});

test("a full window short of hits reads again with its crowding sessions, the rounds bounded across windows", async () => {
  const active = { limit: 5, activeOnly: true };
  const paths = new ActivePaths();
  const reads: (readonly number[])[] = [];
  type Answer = WindowRead & { crowding: { num: number; depth: number }[] };
  // Each read finds one hit more and names a crowding session of its own.
  const read = async (kept: readonly number[]): Promise<Answer> => {
    reads.push(kept);
    return { found: kept.length, held: 40, full: true, crowding: [{ num: kept.length + 1, depth: 1 }] };
  };
  const rounds = {
    crowding: (answer: Answer) => answer.crowding,
    reread: read,
  };
  assert.equal(
    (await keepWindowToActivePaths(active, await read([]), rounds, paths)).found,
    ACTIVE_PATH_ROUNDS,
  );
  assert.deepEqual(reads, [[], [1], [1, 2], [1, 2, 3]]);
  // The next window keeps to those sessions and reads no more rounds: they are spent.
  reads.length = 0;
  await keepWindowToActivePaths(active, await read(paths.kept), rounds, paths);
  assert.deepEqual(reads, [[1, 2, 3]]);
  // Not full, or every hit counting: no round.
  reads.length = 0;
  await keepWindowToActivePaths(active, { ...(await read([])), full: false }, rounds);
  await keepWindowToActivePaths({ limit: 5, activeOnly: false }, await read([]), rounds);
  assert.deepEqual(reads, [[], []]);
});
