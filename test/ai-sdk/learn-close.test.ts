// Closing right after a turn (issue #92, item 6): the store's close() cancels the learning a chat's `learn` option
// started and waits for it, so the learn never meets a closed store (it used to print AgentSessionFactsWarning:
// "This SqliteStore was closed"); the turn stays unlearned and the next learn learns it.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import { generateText, wrapLanguageModel } from "ai";
import { sessionMemory } from "../../src/ai-sdk/index.js";
import type { FactCapableStore } from "../../src/contract/facts.js";
import type { ExtractedFact, ExtractInput } from "../../src/facts/types.js";
import { learnFacts, MemoryStore, SqliteStore } from "../../src/index.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { tempDir } from "../cli/helpers.js";
import { pgliteSwitchedOff } from "../fixtures/postgres-db.js";
import { warningsOf } from "../helpers/warnings.js";
import { generatingModel } from "./memory-helpers.js";

const tmp = tempDir("agent-session-learn-close-");
after(() => tmp.remove());

const said = async (input: ExtractInput): Promise<ExtractedFact[]> =>
  input.messages
    .filter((m) => m.role === "user" && m.text.startsWith("I "))
    .map((m) => ({ text: `The user says: ${m.text}`, about: "user", sources: [m.id] }));

/** An extractor held until `release()`, with `called` resolved once it is called (the learn is in flight). */
function held() {
  let release!: () => void;
  let started!: () => void;
  const open = new Promise<void>((resolve) => {
    release = resolve;
  });
  const called = new Promise<void>((resolve) => {
    started = resolve;
  });
  const extractor = async (input: ExtractInput): Promise<ExtractedFact[]> => {
    started();
    await open;
    return said(input);
  };
  return { extractor, release, called };
}

for (const [name, skip, open] of [
  ["memory", false, () => new MemoryStore()],
  ["SQLite", false, (path: string) => new SqliteStore(path)],
  ["PGlite", pgliteSwitchedOff() ?? false, () => new PostgresStore(new PGlite())],
] as Array<[string, string | false, (path: string) => FactCapableStore]>) {
  describe(`close() right after a learned turn (${name})`, { skip }, () => {
    test("cancels the learn in flight: no warning, close does not wait for the extractor", async () => {
      const path = tmp.path(`close-${process.hrtime.bigint()}.db`);
      const store = open(path);
      const gate = held();
      const middleware = sessionMemory({ store, sessionId: "c1", learn: { extractor: gate.extractor } });
      const model = wrapLanguageModel({ model: generatingModel(() => ({ text: "Noted." })), middleware });
      assert.equal((await generateText({ model, prompt: "I live in Lyon" })).text, "Noted.");
      await gate.called;
      const warnings = await warningsOf("AgentSessionFactsWarning", async () => {
        await store.close(); // resolves while the extractor is still held: the learn was cancelled
        gate.release();
        await middleware.learned();
      });
      assert.deepEqual(
        warnings.map((w) => w.message),
        [],
      );
      if (name !== "SQLite") return;
      // The turn was not lost: the next learn (here learnFacts on the reopened file) learns it.
      const again = new SqliteStore(path);
      assert.deepEqual((await again.facts.list({ sessionId: "c1" })).facts, [], "nothing half-learned");
      await learnFacts(again, { extractor: said, sessionIds: ["c1"] });
      assert.deepEqual(
        (await again.facts.list({ sessionId: "c1" })).facts.map((f) => f.text),
        ["The user says: I live in Lyon"],
      );
      await again.close();
    });

    test("learned() before close() keeps the learning", async () => {
      const store = open(tmp.path(`kept-${process.hrtime.bigint()}.db`));
      const middleware = sessionMemory({ store, sessionId: "k1", learn: { extractor: said } });
      const model = wrapLanguageModel({ model: generatingModel(() => ({ text: "Noted." })), middleware });
      await generateText({ model, prompt: "I like tea" });
      await middleware.learned();
      assert.deepEqual(
        (await store.facts.list({ sessionId: "k1" })).facts.map((f) => f.text),
        ["The user says: I like tea"],
      );
      await store.close();
    });
  });
}
