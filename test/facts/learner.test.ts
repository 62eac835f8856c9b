// The background learner: off the append path, after a quiet spell or a window's worth of messages.
import assert from "node:assert/strict";
import { test } from "node:test";
import { startLearning } from "../../src/facts/learner.js";
import type { BatchFailure, ExtractInput } from "../../src/facts/types.js";
import { MemoryStore } from "../../src/memory/store.js";
import { appendTurns, sayingExtractor } from "./helpers.js";

const until = async (check: () => Promise<boolean>, ms = 2_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

test("appends are learned in the background once the session is quiet, never on the append path", async () => {
  const store = new MemoryStore();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const { extract, calls } = sayingExtractor();
  let entered = 0;
  const learner = startLearning(store, {
    quietMs: 0,
    extractor: async (input: ExtractInput) => {
      entered++;
      await gate;
      return extract(input);
    },
  });
  await appendTurns(store, "s", ["I live in Paris", "ok"]);
  await until(async () => entered === 1);
  // The learner is held inside its extractor call: appends still complete.
  await appendTurns(store, "s", ["I like tea", "ok"], "n");
  assert.equal(calls.length, 0);
  release();
  await until(async () => (await store.facts.list({ sessionId: "s" })).facts.length === 2);
  await learner.idle();
  assert.equal(learner.counts.added, 2);
  await appendTurns(store, "s", ["I work at Acme"], "k");
  await learner.flush();
  assert.equal((await store.facts.list({ sessionId: "s" })).facts.length, 3);
  assert.deepEqual(
    calls.at(-1)?.messages.map((m) => m.id),
    ["k0"],
  );
  await learner.close();
  await store.close();
});

test("a window's worth of messages is learned without waiting for quiet", async () => {
  const store = new MemoryStore();
  const { extract, calls } = sayingExtractor();
  const learner = startLearning(store, { extractor: extract, quietMs: 60_000, window: 4 });
  await appendTurns(store, "s", ["I a", "b", "I c", "d"]);
  await until(async () => calls.length === 1);
  assert.equal(calls[0]?.messages.length, 4);
  await learner.close();
});

test("a failing batch is retried in the background after its delay, then skipped and reported", async () => {
  const store = new MemoryStore();
  const failures: BatchFailure[] = [];
  let tries = 0;
  const learner = startLearning(store, {
    quietMs: 0,
    retryDelayMs: 10,
    maxAttempts: 3,
    extractor: async () => {
      tries++;
      throw new Error("rate limited");
    },
    onError: (_error, failure) => failures.push(failure),
  });
  await appendTurns(store, "s", ["I live in Paris"]);
  await until(async () => failures.some((f) => f.skipped));
  assert.equal(tries, 3);
  assert.equal(learner.counts.skipped.length, 1);
  assert.equal((await store.facts.mark("s"))?.failures, 0);
  await learner.close();
});

test("two background learners on one store: each session is learned once", async () => {
  const store = new MemoryStore();
  const a = sayingExtractor();
  const b = sayingExtractor();
  const first = startLearning(store, { extractor: a.extract, quietMs: 0 });
  const second = startLearning(store, { extractor: b.extract, quietMs: 0 });
  await appendTurns(store, "s", ["I live in Paris", "ok", "I like tea", "ok"]);
  await first.flush();
  await second.flush();
  await until(async () => (await store.facts.mark("s"))?.holder === null);
  await first.flush();
  await second.flush();
  assert.equal((await store.facts.list({ sessionId: "s" })).facts.length, 2);
  assert.equal(first.counts.added + second.counts.added, 2);
  assert.equal(first.counts.duplicates + second.counts.duplicates, 0);
  await first.close();
  await second.close();
});

test("close() abandons an extractor call in flight; the batch stays unlearned for the next learner", async () => {
  const store = new MemoryStore();
  const learner = startLearning(store, { quietMs: 0, extractor: () => new Promise(() => {}) });
  await appendTurns(store, "s", ["I live in Paris"]);
  await until(
    async () => (await store.facts.mark("s"))?.holder !== null && (await store.facts.mark("s")) !== null,
  );
  await learner.close();
  const mark = await store.facts.mark("s");
  assert.equal(mark?.through, 0);
  assert.equal(mark?.holder, null);
  const { extract } = sayingExtractor();
  const next = startLearning(store, { extractor: extract, quietMs: 0 });
  await appendTurns(store, "s", ["ok"], "n");
  await until(async () => (await store.facts.list({ sessionId: "s" })).facts.length === 1);
  await next.close();
});
