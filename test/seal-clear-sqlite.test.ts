// Sealing an owner's clear history on SQLite (better-sqlite3, node:sqlite where Node has it, and the `sql` tag;
// docs/PRIVACY.md "Sealing an owner's clear history"): alice's messages, summaries, blocks, entries, facts, stream
// chunks and change-log rows, written before she had a key, are sealed by rekey(owner, { sealClear: true }), stopped
// after one batch and resumed; after a purge none of their words is in the file or its log, everything reads and
// searches the same with the keyring, and a store without it refuses her. Bob, who has no key, stays in clear.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { FeedCapableStore } from "../src/contract/feed.js";
import { loadNodeSqlite } from "../src/sql/engines/sqlite/better-sqlite3.js";
import type { SqliteDriverName } from "../src/sql/engines/sqlite/open.js";
import { SqliteStore } from "../src/sqlite/store.js";
import type { Keyring } from "../src/store/crypto/keyring.js";
import { occurrences } from "./helpers/encryption.js";
import { sqliteFiles } from "./helpers/purge.js";
import { aliceKeyring, newKey } from "./helpers/rekey-places.js";
import {
  type ClearStore,
  refusesAlice,
  replayedSummaries,
  rotatesAndSeals,
  sealInterrupted,
  seedClear,
  snapshot,
  WORDS,
} from "./helpers/seal-clear.js";
import { sqlTagAgent } from "./helpers/sql-tag.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-seal-clear-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const variants: { name: string; driver?: SqliteDriverName; skip: string | false }[] = [
  { name: "better-sqlite3", driver: "better-sqlite3", skip: false },
  {
    name: "node:sqlite",
    driver: "node:sqlite",
    skip: loadNodeSqlite() ? false : `node:sqlite needs Node >= 22.13 (${process.version})`,
  },
  { name: "the sql tag", skip: false },
];

for (const { name, driver, skip } of variants) {
  const tag = driver === undefined;
  const open = (path: string, keyring?: Keyring) => {
    // With the change log: its compaction rows hold the overlay's summary.
    const options = { maxValueBytes: 4096, changeLog: true, ...(keyring ? { keyring } : {}) };
    return (
      driver === undefined
        ? new SqliteStore(sqlTagAgent(path), options)
        : new SqliteStore(path, { ...options, driver })
    ) as ClearStore;
  };

  test(`SQLite (${name}): sealClear seals an owner's clear history, resumable, and nothing of it stays in the file`, {
    skip,
  }, async () => {
    const path = join(dir, `${name.replace(/\W+/g, "-")}.db`);
    const plain = open(path);
    const seeded = await seedClear(plain);
    const { alice, snapshot: before } = seeded;
    await plain.close();
    const key = newKey();
    const store = open(path, aliceKeyring(key));
    try {
      assert.deepEqual(await snapshot(store, alice), before, "a keyring with her key reads her clear rows");
      const report = await sealInterrupted(store, seeded);
      assert.equal(report.total, 7);
      assert.ok(report.resealed > 0 && report.resealed < 7, "the first run sealed its batch");
      assert.deepEqual(await snapshot(store, alice), before, "reads and searches are the same");
      const again = await store.rekey("alice", { sealClear: true });
      assert.deepEqual([again.resealed, again.resumed], [0, false], "a second run seals nothing");
    } finally {
      await store.close();
    }
    // The sql tag's store (a Durable Object's) leaves its purge to its platform: the file's own store purges it
    // (merging the search indexes), and, as the tag's writes do not zero what they free, the file is rewritten.
    const purging = new SqliteStore(path, { keyring: aliceKeyring(key) });
    try {
      const purged = await purging.purge();
      assert.equal(purged.complete, true, JSON.stringify(purged));
    } finally {
      await purging.close();
    }
    if (tag) {
      const { db } = sqlTagAgent(path);
      db.exec("VACUUM");
      db.pragma("wal_checkpoint(TRUNCATE)");
      db.close();
    }
    for (const [kind, word] of Object.entries(WORDS)) {
      const found = sqliteFiles(path).map((file) => occurrences([file], word));
      assert.deepEqual(found, [0, 0, 0], `no ${kind} word in the file or its log`);
    }
    assert.ok(occurrences(sqliteFiles(path), "bob plain words") > 0, "bob, without a key, stays in clear");
    const keyless = open(path);
    try {
      await refusesAlice(keyless, alice);
    } finally {
      await keyless.close();
    }
    const reopened = open(path, aliceKeyring(key));
    try {
      assert.deepEqual(await snapshot(reopened, alice), before);
      const feed = await replayedSummaries(reopened as unknown as FeedCapableStore, 2);
      const summaries = [`alice summary ${WORDS.summary}`, `~sealed look-alike ${WORDS.summary}`];
      assert.deepEqual(feed, summaries, "the change log's rows open for the feed");
    } finally {
      await reopened.close();
    }
  });
}

test("SQLite: sealClear with the owner's key recorded already seals the rows left in clear; without a key it is refused", async () => {
  const path = join(dir, "recorded.db");
  const plain = open2(path);
  const { alice, snapshot: before } = await seedClear(plain);
  await plain.close();
  const key = newKey();
  const store = open2(path, aliceKeyring(key));
  try {
    // A sealed write records her key: the rows before it stay in clear until sealed.
    await store
      .session(alice)
      .appendMessage({ id: "late", role: "user", parts: [{ type: "text", text: "later" }] });
    assert.equal(occurrences(sqliteFiles(path), WORDS.message) > 0, true);
    const report = await store.rekey("alice", { sealClear: true });
    assert.deepEqual([report.resealed, report.resumed], [7, false]);
    await assert.rejects(store.rekey("bob", { sealClear: true }), { code: "INVALID_ARGUMENT" });
    const after = (await snapshot(store, alice)) as { history: string[] };
    assert.deepEqual(after.history.slice(0, -1), (before as { history: string[] }).history);
    await store.purge();
  } finally {
    await store.close();
  }
  assert.equal(occurrences(sqliteFiles(path), WORDS.message), 0);
});

test("SQLite: sealClear with a new key rotates the sealed rows and seals the clear ones in one run", async () => {
  const path = join(dir, "rotate.db");
  await rotatesAndSeals((keyring) => Promise.resolve(open2(path, keyring)), aliceKeyring, [
    newKey(),
    newKey(),
  ]);
});

function open2(path: string, keyring?: Keyring): ClearStore {
  return new SqliteStore(path, keyring ? { keyring } : {}) as ClearStore;
}
