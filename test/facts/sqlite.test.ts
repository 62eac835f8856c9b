// The learner over a SQLite file store: learned facts, the mark across a reopen, two stores on one file.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { learnFacts } from "../../src/facts/learn.js";
import { startLearning } from "../../src/facts/learner.js";
import type { ExtractInput } from "../../src/facts/types.js";
import { SqliteStore } from "../../src/index.js";
import { sayingExtractor } from "./helpers.js";

async function append(store: SqliteStore, sessionId: string, texts: readonly string[], prefix = "m") {
  const provider = store.session(sessionId);
  for (const [i, text] of texts.entries()) {
    await provider.appendMessage({
      id: `${prefix}${i}`,
      role: i % 2 === 0 ? "user" : "assistant",
      parts: [{ type: "text", text }],
    });
  }
}

test("SQLite file: learned into the owner's scope, resumed after a reopen, learned once by two stores", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "facts-learn-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "store.db");
  const first = new SqliteStore(path);
  await first.registry.create({ id: "s", name: "s", owner: "alice" });
  await append(first, "s", ["I live in Paris", "ok", "I like tea", "ok"]);
  const a = sayingExtractor();
  const report = await learnFacts(first, { extractor: a.extract, sessionIds: ["s"], window: 2 });
  assert.equal(report.added, 2);
  const facts = (await first.facts.list({ owner: "alice" })).facts;
  assert.deepEqual(facts.map((f) => f.text).sort(), [
    "The user says: I like tea",
    "The user says: I live in Paris",
  ]);
  assert.deepEqual(facts.find((f) => f.text.includes("Paris"))?.sources, [
    { sessionId: "s", messageId: "m0" },
  ]);
  await first.close();

  // Reopened: the mark is where the last learn left it; only the new messages are read.
  const second = new SqliteStore(path);
  const third = new SqliteStore(path);
  await append(second, "s", ["I work at Acme", "ok"], "n");
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const b = sayingExtractor();
  const held = learnFacts(second, {
    sessionIds: ["s"],
    extractor: async (input: ExtractInput) => {
      await gate;
      return b.extract(input);
    },
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  const c = sayingExtractor();
  const other = await learnFacts(third, { extractor: c.extract, sessionIds: ["s"] });
  assert.deepEqual(other.busy, ["s"], "the other store's learner holds the session");
  release();
  const done = await held;
  assert.equal(done.added, 1);
  assert.deepEqual(
    b.calls.map((call) => call.messages.map((m) => m.id)),
    [["n0", "n1"]],
  );
  assert.equal(c.calls.length, 0);
  assert.equal((await third.facts.list({ owner: "alice" })).facts.length, 3);
  await second.close();
  await third.close();
});

test("SQLite: the background learner learns appended messages through the store's feed", async () => {
  const store = new SqliteStore(":memory:");
  const { extract } = sayingExtractor();
  const learner = startLearning(store, { extractor: extract, quietMs: 0 });
  await append(store, "s", ["I live in Paris", "ok"]);
  const end = Date.now() + 3_000;
  while ((await store.facts.list({ sessionId: "s" })).facts.length === 0) {
    if (Date.now() > end) throw new Error("not learned");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await learner.close();
  await store.close();
});
