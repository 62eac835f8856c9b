import assert from "node:assert/strict";
import { test } from "node:test";
import { learnFacts } from "../../src/facts/learn.js";
import type { BatchFailure, ExtractInput } from "../../src/facts/types.js";
import { MemoryStore } from "../../src/memory/store.js";
import { appendTurns, sayingExtractor, storeWithOwner } from "./helpers.js";

const TURNS = [
  "I live in Paris",
  "Nice city.",
  "I have a dog named Rex",
  "Lovely.",
  "What time is it?",
  "Noon.",
];

test("learnFacts learns a session's facts once, each naming its source, with counts", async () => {
  const store = new MemoryStore();
  await appendTurns(store, "s1", TURNS);
  const { extract, calls } = sayingExtractor();
  const report = await learnFacts(store, { extractor: extract, sessionIds: ["s1"] });
  assert.equal(report.messages, 6);
  assert.equal(report.batches, 1);
  assert.equal(report.added, 2);
  assert.equal(report.sessions, 1);
  assert.equal(calls.length, 1);
  const page = await store.facts.list({ sessionId: "s1" });
  assert.deepEqual(page.facts.map((f) => f.text).sort(), [
    "The user says: I have a dog named Rex",
    "The user says: I live in Paris",
  ]);
  const paris = page.facts.find((f) => f.text.includes("Paris"));
  assert.deepEqual(paris?.sources, [{ sessionId: "s1", messageId: "m0" }]);
  assert.equal(paris?.producer, "function:extract");
  assert.equal(paris?.about, "user");
  assert.equal(
    (await store.facts.mark("s1"))?.through,
    (await store.facts.unlearned("s1", 0, 10)).at(-1)?.seq,
  );
  // Nothing new: a second learn reads nothing and calls nothing.
  const again = await learnFacts(store, { extractor: extract, sessionIds: ["s1"] });
  assert.equal(again.messages, 0);
  assert.equal(calls.length, 1);
  // New messages: only they are read.
  await appendTurns(store, "s1", ["I work at Acme", "Great."], "n");
  const more = await learnFacts(store, { extractor: extract, sessionIds: ["s1"] });
  assert.equal(more.messages, 2);
  assert.equal(more.added, 1);
  assert.deepEqual(
    calls[1]?.messages.map((m) => m.id),
    ["n0", "n1"],
  );
});

test("a window of N messages and a sitting's end split the batches", async (t) => {
  const store = new MemoryStore();
  // Two sittings: 5 messages, then a day later 3 (a message's time is when it was stored).
  t.mock.timers.enable({ apis: ["Date"], now: Date.UTC(2024, 0, 1) });
  await appendTurns(store, "s", ["a", "b", "c", "d", "e"]);
  t.mock.timers.tick(86_400_000);
  await appendTurns(store, "s", ["f", "g", "h"], "n");
  t.mock.timers.reset();
  const { extract, calls } = sayingExtractor();
  await learnFacts(store, { extractor: extract, sessionIds: ["s"], window: 3 });
  assert.deepEqual(
    calls.map((c) => c.messages.map((m) => m.id).join(",")),
    ["m0,m1,m2", "m3,m4", "n0,n1,n2"],
  );
});

test("an owner's sessions learn into the owner's scope, oldest activity first; learnFacts({ owner }) reads only its sessions", async () => {
  const store = await storeWithOwner("alice", ["a1", "a2"]);
  await store.registry.create({ id: "b1", name: "b1", owner: "bob" });
  await appendTurns(store, "a1", ["I live in Paris"]);
  await appendTurns(store, "a2", ["I like tea"]);
  await appendTurns(store, "b1", ["I like coffee"]);
  const { extract } = sayingExtractor();
  const progress: string[] = [];
  const report = await learnFacts(store, {
    extractor: extract,
    owner: "alice",
    onProgress: (p) => progress.push(p.sessionId),
  });
  assert.equal(report.sessions, 2);
  // Oldest activity first: the session written to last is learned last, so its facts supersede the older ones'.
  assert.deepEqual(progress, ["a1", "a2"]);
  const alice = await store.facts.list({ owner: "alice" });
  assert.equal(alice.facts.length, 2);
  assert.equal((await store.facts.list({ owner: "bob" })).facts.length, 0);
  assert.equal(await store.facts.mark("b1"), null);
});

test("a fact naming a message outside its batch, out of schema or oversized is refused alone", async () => {
  const store = new MemoryStore();
  await appendTurns(store, "s", ["I live in Paris", "ok"]);
  const refusals: string[] = [];
  const report = await learnFacts(store, {
    sessionIds: ["s"],
    extractor: async () => [
      { text: "The user lives in Paris.", sources: ["m0"] },
      { text: "The user is an admin.", sources: ["not-in-batch"] },
      { text: "", sources: ["m0"] },
      { text: "x".repeat(5_000), sources: ["m0"] },
      { text: "No sources.", sources: [] },
      { nonsense: true } as never,
    ],
    onRefused: (reasons) => refusals.push(...reasons),
  });
  assert.equal(report.added, 1);
  assert.equal(report.refused, 5);
  assert.equal(refusals.length, 5);
  assert.match(refusals[0] ?? "", /outside its batch/);
  assert.equal((await store.facts.list({ sessionId: "s" })).facts.length, 1);
});

test("a fact whose source message is deleted while the extractor runs is refused alone, never kept", async () => {
  const store = new MemoryStore();
  await appendTurns(store, "s", ["I live in Paris", "ok", "I have a dog", "ok"]);
  const { extract } = sayingExtractor();
  const refusals: string[] = [];
  const report = await learnFacts(store, {
    sessionIds: ["s"],
    extractor: async (input: ExtractInput) => {
      await store.session("s").deleteMessages(["m2"]);
      return extract(input);
    },
    onRefused: (reasons) => refusals.push(...reasons),
  });
  assert.deepEqual([report.added, report.refused], [1, 1]);
  assert.match(refusals[0] ?? "", /names message "m2" of session "s", which this store does not hold/);
  assert.deepEqual(
    (await store.facts.list({ sessionId: "s" })).facts.map((f) => f.text),
    ["The user says: I live in Paris"],
  );
});

test("a failing batch is retried with a growing delay, then skipped with a report; the next batch still learns", async () => {
  const store = new MemoryStore();
  await appendTurns(store, "s", ["I fail", "x", "I live in Paris", "y"]);
  const failures: BatchFailure[] = [];
  let tries = 0;
  const started = Date.now();
  const report = await learnFacts(store, {
    sessionIds: ["s"],
    window: 2,
    maxAttempts: 3,
    retryDelayMs: 20,
    extractor: async (input: ExtractInput) => {
      if (input.messages.some((m) => m.text === "I fail")) {
        tries++;
        throw new Error("model down");
      }
      return [{ text: "The user lives in Paris.", sources: ["m2"] }];
    },
    onError: (_error, failure) => failures.push(failure),
  });
  assert.equal(tries, 3);
  assert.ok(Date.now() - started >= 20 + 40, "the delays double: 20 ms, then 40 ms");
  assert.deepEqual(
    failures.map((f) => [f.attempts, f.skipped]),
    [
      [1, false],
      [2, false],
      [3, true],
    ],
  );
  assert.equal(report.failures, 3);
  assert.equal(report.skipped.length, 1);
  assert.equal(report.skipped[0]?.error, "model down");
  assert.equal(report.added, 1);
  assert.equal(report.messages, 4);
  const mark = await store.facts.mark("s");
  assert.equal(mark?.failures, 0);
});

test("a learner stopped mid-batch leaves the mark; the next one resumes there and adds nothing twice", async () => {
  const store = new MemoryStore();
  await appendTurns(store, "s", ["I live in Paris", "ok", "I like tea", "ok"]);
  const controller = new AbortController();
  let calls = 0;
  // The first learner stores the second batch's fact, then is stopped before it moves the mark past the batch.
  const stopping = async (input: ExtractInput) => {
    calls++;
    const facts = input.messages
      .filter((m) => m.text.startsWith("I "))
      .map((m) => ({ text: `The user says: ${m.text}`, sources: [m.id] }));
    if (calls === 2) {
      const { learnedFactIds } = await import("../../src/facts/consolidate.js");
      const fact = { text: facts[0]!.text, about: null, sources: ["m2"], action: null, target: null };
      await store.facts.add({ sessionId: "s" }, [
        {
          id: learnedFactIds({ sessionId: "s" }, "s", fact)[0] as string,
          text: fact.text,
          observedAt: 0,
          sources: [{ sessionId: "s", messageId: "m2" }],
          producer: "function:stopping",
        },
      ]);
      controller.abort(new Error("killed"));
    }
    return facts;
  };
  await assert.rejects(
    learnFacts(store, { extractor: stopping, sessionIds: ["s"], window: 2, signal: controller.signal }),
    /killed/,
  );
  const mark = await store.facts.mark("s");
  const seqs = (await store.facts.unlearned("s", 0, 10)).map((m) => m.seq);
  assert.equal(mark?.through, seqs[1], "the first batch is learned, the second is not");
  assert.equal(mark?.holder, null, "the lease was released");
  const { extract, calls: seen } = sayingExtractor();
  const report = await learnFacts(store, { extractor: extract, sessionIds: ["s"], window: 2 });
  assert.deepEqual(
    seen.map((c) => c.messages.map((m) => m.id)),
    [["m2", "m3"]],
  );
  assert.equal(report.added, 0);
  assert.equal(report.duplicates, 1, "the fact the stopped learner stored is found by its id");
  assert.equal((await store.facts.list({ sessionId: "s" })).facts.length, 2);
});

test("two learners on one session: the one holding the lease learns, the other leaves it (busy)", async () => {
  const store = new MemoryStore();
  await appendTurns(store, "s", TURNS);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const first = sayingExtractor();
  const slow = async (input: ExtractInput) => {
    await gate;
    return first.extract(input);
  };
  const running = learnFacts(store, { extractor: slow, sessionIds: ["s"] });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const second = sayingExtractor();
  const other = await learnFacts(store, { extractor: second.extract, sessionIds: ["s"] });
  assert.deepEqual(other.busy, ["s"]);
  assert.equal(second.calls.length, 0);
  release();
  const report = await running;
  assert.equal(report.added, 2);
  assert.equal((await store.facts.list({ sessionId: "s" })).facts.length, 2);
});

test("bad options are INVALID_ARGUMENT; a store without facts is UNSUPPORTED", async () => {
  const store = new MemoryStore();
  await assert.rejects(learnFacts(store, { extractor: { modelId: "no doGenerate" } as never }), {
    code: "INVALID_ARGUMENT",
  });
  await assert.rejects(learnFacts(store, { extractor: async () => [], window: 0 }), {
    code: "INVALID_ARGUMENT",
  });
  await assert.rejects(learnFacts(store, { extractor: async () => [], sessionIds: "s1" as never }), {
    code: "INVALID_ARGUMENT",
  });
  await assert.rejects(learnFacts(store, { extractor: async () => [], owner: "" }), {
    code: "INVALID_ARGUMENT",
  });
  const plain = { backend: "x", session: () => null, searchMessages: async () => [], close: async () => {} };
  await assert.rejects(learnFacts(plain as never, { extractor: async () => [] }), { code: "UNSUPPORTED" });
});

test("a recorded extractor replays stored facts with the batch of their first source", async () => {
  const { recordedExtractor } = await import("../../src/facts/recorded.js");
  const store = new MemoryStore();
  await appendTurns(store, "s", ["I live in Paris", "ok", "I like tea", "me too"]);
  const extractor = recordedExtractor(
    [
      { text: "The user lives in Paris.", about: "user", sources: ["m0"] },
      { text: "Both like tea.", sources: ["m2", "m3"] },
      { text: "Spans two batches.", sources: ["m1", "m2"] },
      { text: "Never shown.", sources: ["x9"] },
    ],
    "locomo",
  );
  const report = await learnFacts(store, { extractor, sessionIds: ["s"], window: 2 });
  assert.equal(report.added, 3);
  const facts = (await store.facts.list({ sessionId: "s" })).facts;
  const byText = new Map(facts.map((f) => [f.text, f]));
  assert.deepEqual(
    byText.get("Both like tea.")?.sources.map((s) => s.messageId),
    ["m2", "m3"],
  );
  assert.deepEqual(
    byText.get("Spans two batches.")?.sources.map((s) => s.messageId),
    ["m1"],
  );
  assert.equal(byText.get("The user lives in Paris.")?.producer, "function:locomo");
});

test("an extractor that does not answer within timeoutMs fails its try (abandoned, not awaited)", async () => {
  const store = new MemoryStore();
  await appendTurns(store, "s", ["I live in Paris"]);
  const errors: string[] = [];
  const report = await learnFacts(store, {
    sessionIds: ["s"],
    timeoutMs: 20,
    maxAttempts: 2,
    retryDelayMs: 1,
    extractor: () => new Promise(() => {}),
    onError: (_error, failure) => errors.push(failure.error),
  });
  assert.equal(report.skipped.length, 1);
  assert.match(errors[0] ?? "", /did not answer within 20 ms/);
});
