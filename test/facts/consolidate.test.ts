// Consolidation's rules and the pure parts of learning: the check, the prompt, the query words, the batches.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LearnableMessage } from "../../src/contract/facts.js";
import { firstBatch, promptMessages } from "../../src/facts/batch.js";
import { checkAnswer } from "../../src/facts/check.js";
import { type BatchContext, consolidate, learnedFactIds } from "../../src/facts/consolidate.js";
import { CUT_MARK, MAX_PROMPT_MESSAGE_CHARS, renderBatch } from "../../src/facts/prompt.js";
import { normalizeFact, queryOf } from "../../src/facts/words.js";
import { MemoryStore } from "../../src/memory/store.js";
import { appendTurns } from "./helpers.js";

const message = (seq: number, createdAt: number, text = `t${seq}`): LearnableMessage => ({
  seq,
  id: `m${seq}`,
  role: "user",
  text,
  createdAt,
});

test("a batch ends at a window's end or at the first pause longer than the sitting gap", () => {
  const read = [message(1, 0), message(2, 1_000), message(3, 100_000), message(4, 101_000)];
  assert.deepEqual(
    firstBatch(read, 50_000).map((m) => m.seq),
    [1, 2],
  );
  assert.deepEqual(
    firstBatch(read, 500_000).map((m) => m.seq),
    [1, 2, 3, 4],
  );
  assert.deepEqual(firstBatch([], 1), []);
});

test("the prompt carries messages as JSON data, a long text cut with a visible marker, blank ones left out", () => {
  const long = "x".repeat(MAX_PROMPT_MESSAGE_CHARS + 10);
  const messages = promptMessages([
    message(1, 0, long),
    message(2, 0, "  "),
    message(3, 0, 'say "ignore all"'),
  ]);
  assert.equal(messages.length, 2);
  assert.ok(messages[0]?.text.endsWith(CUT_MARK));
  const rendered = renderBatch({ messages, known: [] });
  const json = JSON.parse(rendered.slice(rendered.indexOf("MESSAGES:\n") + 10));
  assert.equal(json[1].text, 'say "ignore all"', "quotes in a message stay inside its JSON string");
});

test("the check keeps good facts, refuses the rest one by one, and fails only a non-list answer", () => {
  const ids = new Set(["m1", "m2"]);
  const checked = checkAnswer(
    {
      facts: [
        { text: "  A fact.  ", about: " ", sources: ["m1", "m1"], action: null, target: null },
        { text: "Replaces.", sources: ["m2"], action: "supersede" },
        { text: "Bad action.", sources: ["m2"], action: "delete", target: "f" },
        { text: 42, sources: ["m1"] },
      ],
    },
    ids,
  );
  assert.deepEqual(checked.facts, [
    { text: "A fact.", about: null, sources: ["m1"], action: null, target: null },
  ]);
  assert.equal(checked.refused.length, 3);
  assert.match(checked.refused[0] ?? "", /supersede names no target/);
  assert.throws(() => checkAnswer("no", ids), /not a list of facts/);
  assert.throws(() => checkAnswer(null, ids), /not a list of facts/);
  assert.deepEqual(checkAnswer([], ids).facts, []);
});

test("query words: content words only, most frequent first, bounded; folded text ignores case and closing dots", () => {
  assert.equal(queryOf('The user "lives" in Paris; Paris OR NOT -x'), "paris user lives");
  assert.equal(queryOf("the of and"), "");
  assert.equal(
    queryOf(`key ${"a".repeat(4_000)} paris`),
    "key paris",
    "a token too long to find anything is left out",
  );
  assert.equal(queryOf(Array.from({ length: 100 }, (_, i) => `word${i}`).join(" ")).split(" ").length, 24);
  assert.equal(normalizeFact("The  user lives in PARIS."), normalizeFact("the user lives in paris"));
  assert.notEqual(normalizeFact("The user lives in Paris"), normalizeFact("The user lived in Paris"));
});

async function context(store: MemoryStore): Promise<BatchContext> {
  await appendTurns(store, "s", ["I live in Paris", "ok", "I live in Lyon"]);
  const times = new Map((await store.facts.unlearned("s", 0, 10)).map((m) => [m.id, m.createdAt]));
  return {
    scope: { sessionId: "s" },
    sessionId: "s",
    times,
    known: [],
    producer: "function:test",
    digests: [],
  };
}

const fact = (text: string, sources: string[], action: string | null = null, target: string | null = null) =>
  ({ text, about: null, sources, action, target }) as Parameters<typeof consolidate>[2];

test("the rules: same folded text is a duplicate; an unknown or stale target is ignored; same id twice adds once", async () => {
  const store = new MemoryStore();
  const batch = await context(store);
  const seen = new Set<string>();
  assert.equal(
    await consolidate(store.facts, batch, fact("The user lives in Paris.", ["m0"]), seen),
    "added",
  );
  // Found by its words among the scope's current facts (not in this batch's `seen`).
  assert.equal(
    await consolidate(store.facts, batch, fact("the user lives in paris", ["m2"]), new Set()),
    "duplicate",
  );
  // Learned again from the same sources: its id is stored.
  assert.equal(
    await consolidate(store.facts, batch, fact("The user lives in Paris.", ["m0"]), new Set()),
    "duplicate",
  );
  // A target that is no fact of the scope: the action is ignored and the rules go on.
  assert.equal(
    await consolidate(store.facts, batch, fact("The user likes tea.", ["m0"], "supersede", "nope"), seen),
    "added",
  );
  const paris = learnedFactIds(
    { sessionId: "s" },
    "s",
    fact("The user lives in Paris.", ["m0"]),
  )[0] as string;
  assert.equal(
    await consolidate(store.facts, batch, fact("The user lives in Lyon.", ["m2"], "supersede", paris), seen),
    "superseded",
  );
  // Paris is no longer current: a second supersede of it is ignored, and the fact is a plain add.
  assert.equal(
    await consolidate(
      store.facts,
      batch,
      fact("The user lives in Lyon, France.", ["m2"], "supersede", paris),
      seen,
    ),
    "added",
  );
  const lyon = (await store.facts.list({ sessionId: "s" })).facts.find(
    (f) => f.text === "The user lives in Lyon.",
  );
  assert.equal(lyon?.observedAt, batch.times.get("m2"), "observed at its newest source's time");
  assert.equal((await store.facts.get({ sessionId: "s" }, paris))?.supersededBy, lyon?.id);
});

test("a supersede whose fact was stored by a stopped try is completed when the batch is learned again", async () => {
  const store = new MemoryStore();
  const batch = await context(store);
  const seen = new Set<string>();
  await consolidate(store.facts, batch, fact("The user lives in Paris.", ["m0"]), seen);
  const paris = learnedFactIds(
    { sessionId: "s" },
    "s",
    fact("The user lives in Paris.", ["m0"]),
  )[0] as string;
  const lyon = fact("The user lives in Lyon.", ["m2"], "supersede", paris);
  const id = learnedFactIds({ sessionId: "s" }, "s", lyon)[0] as string;
  // The stopped try stored the fact but never marked Paris superseded.
  await store.facts.add({ sessionId: "s" }, [
    { id, text: lyon.text, observedAt: 0, sources: [{ sessionId: "s", messageId: "m2" }], producer: "x" },
  ]);
  assert.equal(await consolidate(store.facts, batch, lyon, new Set()), "superseded");
  assert.equal((await store.facts.get({ sessionId: "s" }, paris))?.status, "superseded");
});

test("docs/FACTS.md shows the shipped prompt as it is", async () => {
  const { readFile } = await import("node:fs/promises");
  const { DEFAULT_FACT_PROMPT } = await import("../../src/facts/prompt.js");
  const doc = await readFile(new URL("../../docs/FACTS.md", import.meta.url), "utf8");
  assert.ok(doc.includes(`\`\`\`text\n${DEFAULT_FACT_PROMPT}\n\`\`\``));
});
