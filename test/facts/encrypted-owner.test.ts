// Learning an encrypted owner's session: the store refuses her facts (DECRYPT_FAILED: they are not stored yet), so
// the learner leaves the session at once, says so, and moves no mark past messages a later store may take.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { learnFacts } from "../../src/facts/learn.js";
import { startLearning } from "../../src/facts/learner.js";
import type { BatchFailure } from "../../src/facts/types.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { ownedSession } from "../../src/testing/contract/facts-harness.js";
import { msg } from "../../src/testing/contract/harness.js";
import { randomKeyring } from "../helpers/encryption.js";
import { sayingExtractor } from "./helpers.js";

function keyedStore(t: { after(fn: () => unknown): void }): SqliteStore {
  const dir = mkdtempSync(join(tmpdir(), "learn-encrypted-"));
  const store = new SqliteStore(join(dir, "store.db"), { keyring: randomKeyring(["alice"]) });
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

test("learnFacts lists an encrypted owner's sessions under `encrypted`: one extractor call, no retry, no skipped batch, the marks unmoved", async (t) => {
  const store = keyedStore(t);
  await ownedSession(store, "a", "alice", ["I like tea", "noted"]);
  await ownedSession(store, "a2", "alice", ["I like milk", "noted"]);
  await ownedSession(store, "b", null, ["I like coffee", "noted"]);
  const failures: BatchFailure[] = [];
  const { extract, calls } = sayingExtractor();
  const report = await learnFacts(store, {
    extractor: extract,
    sessionIds: ["a", "a2", "b"],
    retryDelayMs: 60_000,
    onError: (_error, failure) => void failures.push(failure),
  });
  assert.deepEqual(report.encrypted, ["a", "a2"]);
  assert.deepEqual([report.failures, report.skipped.length, failures.length], [0, 0, 0]);
  assert.equal((await store.facts.mark("a"))?.through ?? 0, 0);
  assert.equal((await store.facts.mark("a2"))?.through ?? 0, 0);
  // Her facts are found refused only on their first write: her second session costs no extractor call.
  assert.deepEqual(
    calls.map((c) => c.sessionId),
    ["a", "b"],
  );
  // The session without an owner, after hers, is learned as ever (a keyring store keys every owner it meets).
  assert.equal((await store.facts.list({ sessionId: "b" })).facts.length, 1);
});

test("the background learner says once that it leaves an encrypted owner's session, and does not come back to it", async (t) => {
  const store = keyedStore(t);
  const errors: string[] = [];
  const { extract, calls } = sayingExtractor();
  const learner = startLearning(store, {
    extractor: extract,
    quietMs: 0,
    onError: (error) => void errors.push((error as { code?: string }).code ?? String(error)),
  });
  t.after(() => learner.close());
  await ownedSession(store, "a", "alice", ["I like tea", "noted"]);
  await learner.flush();
  await store.session("a").appendMessage(msg("a-2", "I like green tea"));
  await learner.flush();
  assert.deepEqual(errors, ["DECRYPT_FAILED"]);
  // One extractor call finds her facts refused (on their write); the append after it is not learned again.
  assert.equal(calls.length, 1);
  assert.deepEqual(learner.counts.encrypted, ["a"]);
  assert.equal((await store.facts.mark("a"))?.through ?? 0, 0);
});
