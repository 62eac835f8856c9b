// Learning an encrypted owner's sessions: a store with her key learns them as any other, her facts sealed
// (docs/FACTS.md, "Encryption"); a store without it (no keyring, a wrong key) refuses her facts with DECRYPT_FAILED,
// so the learner leaves the session at once, says so, writes nothing and moves no mark.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { learnFacts } from "../../src/facts/learn.js";
import { startLearning } from "../../src/facts/learner.js";
import type { BatchFailure } from "../../src/facts/types.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { ownedSession } from "../../src/testing/contract/facts-harness.js";
import { msg } from "../../src/testing/contract/harness.js";
import { occurrences, randomKeyring } from "../helpers/encryption.js";
import { sqliteFiles } from "../helpers/purge.js";
import { sayingExtractor } from "./helpers.js";

interface Place {
  path: string;
  open(keyring?: Keyring): SqliteStore;
}

function place(t: { after(fn: () => unknown): void }): Place {
  const dir = mkdtempSync(join(tmpdir(), "learn-encrypted-"));
  const path = join(dir, "store.db");
  const stores: SqliteStore[] = [];
  t.after(async () => {
    for (const store of stores) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    path,
    open: (keyring) => {
      const store = new SqliteStore(path, keyring ? { keyring } : {});
      stores.push(store);
      return store;
    },
  };
}

test("a store with her key learns an encrypted owner's sessions as any other, her facts sealed", async (t) => {
  const at = place(t);
  const store = at.open(randomKeyring(["alice"]));
  await ownedSession(store, "a", "alice", ["I like zqxoolongq tea", "noted"]);
  await ownedSession(store, "b", null, ["I like coffee", "noted"]);
  const { extract } = sayingExtractor();
  const report = await learnFacts(store, { extractor: extract, sessionIds: ["a", "b"] });
  assert.deepEqual([report.encrypted, report.added, report.failures], [[], 2, 0]);
  const hers = await store.facts.search({ owner: "alice" }, "zqxoolongq");
  assert.deepEqual(
    hers.map((h) => h.fact.text),
    ["The user says: I like zqxoolongq tea"],
  );
  assert.equal((await store.facts.mark("a"))?.through, 2);
  await store.close();
  // Her message and her fact are sealed: neither is in the file's bytes; the clear session's fact is.
  assert.equal(occurrences(sqliteFiles(at.path), "zqxoolongq"), 0);
  assert.ok(occurrences(sqliteFiles(at.path), "I like coffee") > 0);
});

test("learnFacts on a store without her key lists her sessions under `encrypted`: nothing written, no retry, the marks unmoved", async (t) => {
  const at = place(t);
  // Her session "c" was written in clear before she had a key; "a" was sealed after.
  const plain = at.open();
  await ownedSession(plain, "c", "alice", ["I like tea", "noted"]);
  const keyed = at.open(randomKeyring(["alice"]));
  await ownedSession(keyed, "a", "alice", ["I like milk", "noted"]);
  await ownedSession(plain, "b", null, ["I like coffee", "noted"]);
  // No keyring, then a wrong key: "b" is learned by the first (the second finds it learned).
  for (const [store, called] of [
    [plain, ["b"]],
    [at.open(randomKeyring(["alice"])), []],
  ] as const) {
    const failures: BatchFailure[] = [];
    const { extract, calls } = sayingExtractor();
    const report = await learnFacts(store, {
      extractor: extract,
      sessionIds: ["c", "a", "b"],
      retryDelayMs: 60_000,
      onError: (_error, failure) => void failures.push(failure),
    });
    assert.deepEqual(report.encrypted, ["c", "a"]);
    assert.deepEqual([report.failures, report.skipped.length, failures.length], [0, 0, 0]);
    // Her facts are refused before the extractor is asked (her sealed messages, or her known facts, do not open).
    assert.deepEqual(
      calls.map((c) => c.sessionId),
      called,
    );
  }
  assert.equal((await keyed.facts.mark("a"))?.through ?? 0, 0);
  assert.equal((await keyed.facts.mark("c"))?.through ?? 0, 0);
  assert.deepEqual((await keyed.facts.list({ owner: "alice" })).facts, []);
  // The session without an owner is learned as ever.
  assert.equal((await keyed.facts.list({ sessionId: "b" })).facts.length, 1);
});

test("the background learner of a store without her key says once that it leaves her session", async (t) => {
  const at = place(t);
  const store = at.open();
  await ownedSession(store, "a", "alice", ["I like tea", "noted"]);
  const errors: string[] = [];
  const { extract, calls } = sayingExtractor();
  const learner = startLearning(store, {
    extractor: extract,
    quietMs: 60_000,
    onError: (error) => void errors.push((error as { code?: string }).code ?? String(error)),
  });
  t.after(() => learner.close());
  // Heard in clear; then another store gives her a key before the learner gets to it.
  await store.session("a").appendMessage(msg("a-2", "I like green tea"));
  await ownedSession(at.open(randomKeyring(["alice"])), "k", "alice", ["her key is recorded now"]);
  await learner.flush();
  await learner.flush();
  assert.deepEqual(errors, ["DECRYPT_FAILED"]);
  assert.equal(calls.length, 0);
  assert.deepEqual(learner.counts.encrypted, ["a"]);
  assert.equal((await store.facts.mark("a"))?.through ?? 0, 0);
  assert.deepEqual(
    await store.facts.list({ sessionId: "k" }).catch((e: { code: string }) => e.code),
    "DECRYPT_FAILED",
  );
});
