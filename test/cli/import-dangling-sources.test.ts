// `agent-session import` of an export whose fact names a message that is neither stored nor in the file (as a store
// written before facts' sources were checked exported): the fact's other sources and the rest of the backup are
// imported, the dangling source is left out (the fact too when it has no other), and the import warns naming it.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, test } from "node:test";
import { SqliteStore } from "../../src/index.js";
import { msg } from "../../src/testing/contract/harness.js";
import { parseJson, runCli, tempDir } from "./helpers.js";

const tmp = tempDir("agent-session-dangling-");
after(() => tmp.remove());

test("an import leaves a fact source naming a missing message out, with a warning and a report", async () => {
  const from = tmp.path("from.db");
  const store = new SqliteStore(from);
  try {
    await store.registry.create({ id: "s", name: "s", owner: "alice" });
    await store.session("s").appendMessage(msg("m0", "Alice moved to Boston"));
    await store.session("s").appendMessage(msg("m1", "Alice likes tea"));
    const source = (messageId: string) => ({ sessionId: "s", messageId });
    await store.facts.add({ owner: "alice" }, [
      {
        id: "boston",
        text: "Alice lives in Boston.",
        observedAt: 1,
        sources: [source("m0")],
        producer: "function:t",
      },
      { id: "tea", text: "Alice likes tea.", observedAt: 2, sources: [source("m1")], producer: "function:t" },
    ]);
  } finally {
    await store.close();
  }
  const exported = await runCli(["export", "--db", from]);
  assert.equal(exported.code, 0, exported.stderr);
  // The file as such a store exported it: "tea" names a message the file does not bring.
  const file = tmp.path("backup.jsonl");
  writeFileSync(file, exported.stdout.replace('"message":"m1"', '"message":"gone"'));
  assert.notEqual(exported.stdout, exported.stdout.replace('"message":"m1"', '"message":"gone"'));
  const result = await runCli(["import", file, "--db", tmp.path("to.db"), "--json"]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stderr,
    /warning: 1 fact source named messages neither stored nor in the file .*1 fact left with no source was not imported; fact "tea" → message "gone" of session "s"/,
  );
  const summary = parseJson(result) as { facts: unknown; messages: unknown; dangling: unknown };
  assert.deepEqual(summary.messages, { inserted: 2, skipped: 0 });
  assert.deepEqual(summary.facts, { inserted: 1, skipped: 0 });
  assert.deepEqual(summary.dangling, {
    sources: 1,
    facts: 1,
    named: [{ fact: "tea", session: "s", message: "gone" }],
  });
});
