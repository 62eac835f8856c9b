// The ids of learned facts (docs/PRIVACY.md, "Ids derived from content"): a learned fact's id is derived from its
// text (consolidate.ts), so for an owner with a key it is keyed — someone holding the file cannot confirm a guess of
// a fact by hashing it — and a batch learned again still stores nothing twice: under the same key, during a key
// rotation (the previous key's id), and for a fact stored before ids were keyed. An owner in clear keeps the SHA-256
// ids it had. On SQLite (a file, its bytes scanned), a Postgres server, PGlite and a Citus cluster.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { FactScope } from "../../src/contract/facts.js";
import type { CheckedFact } from "../../src/facts/check.js";
import { type BatchContext, consolidate, learnedFactIds } from "../../src/facts/consolidate.js";
import { learnFacts } from "../../src/facts/learn.js";
import type { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { ownedSession } from "../../src/testing/contract/facts-harness.js";
import { occurrences } from "../helpers/encryption.js";
import { sqliteFiles } from "../helpers/purge.js";
import { aliceKeyring, newKey, onEveryPlace, openAt } from "../helpers/rekey-places.js";
import { sayingExtractor } from "./helpers.js";

type Store = SqliteStore | PostgresStore;

const SAID = "I like cats";
const TEXT = `The user says: ${SAID}`;
const SCOPE: FactScope = { owner: "alice" };
const LEARNED: CheckedFact = { text: TEXT, about: "user", sources: ["a-0"], action: null, target: null };

/** The ids a fact learned from message a-0 of session "a" may have under `store`'s keys for alice. */
async function idsOf(store: Store): Promise<string[]> {
  return learnedFactIds(SCOPE, "a", LEARNED, (await store.registry.ownerDigests?.("alice")) ?? []);
}

/** The id the fact had before ids were keyed (and has for an owner in clear): the SHA-256 form. */
const PLAIN = learnedFactIds(SCOPE, "a", LEARNED)[0] as string;

/** Consolidates the same fact again, as a learner killed before it moved its mark would. */
async function learnAgain(store: Store): Promise<string> {
  const context: BatchContext = {
    scope: SCOPE,
    sessionId: "a",
    times: new Map([["a-0", 0]]),
    known: [],
    producer: "function:test",
    digests: (await store.registry.ownerDigests?.("alice")) ?? [],
  };
  return consolidate(store.facts, context, LEARNED, new Set());
}

async function factIds(store: Store): Promise<string[]> {
  return (await store.facts.search(SCOPE, "cats")).map((hit) => hit.fact.id);
}

/** The cases on one backend: `open` opens its store (with `keyring`), `onDisk` counts stored bytes holding a text. */
async function keyedCase(open: (keyring?: Keyring) => Promise<Store>, onDisk?: (text: string) => number) {
  const first = newKey();
  let store = await open(aliceKeyring(first));
  await ownedSession(store, "a", "alice", [SAID, "noted"]);
  const report = await learnFacts(store, { extractor: sayingExtractor().extract, sessionIds: ["a"] });
  assert.equal(report.added, 1);
  const keyed = (await idsOf(store))[0] as string;
  assert.deepEqual(await factIds(store), [keyed]);
  assert.notEqual(keyed, PLAIN);
  assert.equal(await store.facts.get(SCOPE, PLAIN), null);
  assert.equal(await learnAgain(store), "duplicate");
  assert.deepEqual(await factIds(store), [keyed], "learned again: stored once");

  // During a rotation the previous key's id is found: still one fact.
  const second = newKey();
  await store.close();
  store = await open(aliceKeyring(second, [first]));
  await store.rekey("alice");
  assert.equal(await learnAgain(store), "duplicate");
  assert.deepEqual(await factIds(store), [keyed]);
  await store.close();
  if (onDisk) {
    assert.equal(onDisk(PLAIN), 0, "the unkeyed id is on disk");
    assert.equal(onDisk("cats"), 0, "the fact's words are on disk in clear");
  }
}

async function clearCase(open: (keyring?: Keyring) => Promise<Store>) {
  const store = await open();
  await ownedSession(store, "a", "alice", [SAID, "noted"]);
  await learnFacts(store, { extractor: sayingExtractor().extract, sessionIds: ["a"] });
  assert.deepEqual(await idsOf(store), [PLAIN], "no key: the SHA-256 id alone");
  assert.deepEqual(await factIds(store), [PLAIN], "an owner in clear keeps the id it had");
  assert.equal(await learnAgain(store), "duplicate");
  await store.close();
}

async function beforeKeyedCase(open: (keyring?: Keyring) => Promise<Store>) {
  // A fact learned under its SHA-256 id (before ids were keyed) is found when the batch is learned again.
  const store = await open(aliceKeyring(newKey()));
  await ownedSession(store, "a", "alice", [SAID, "noted"]);
  await store.facts.add(SCOPE, [
    { id: PLAIN, text: TEXT, observedAt: 0, sources: [{ sessionId: "a", messageId: "a-0" }], producer: "t" },
  ]);
  assert.equal(await learnAgain(store), "duplicate");
  assert.deepEqual(await factIds(store), [PLAIN]);
  await store.close();
}

describe("learned fact ids: SQLite (a file)", () => {
  const places: string[] = [];
  const place = () => {
    const dir = mkdtempSync(join(tmpdir(), "fact-ids-"));
    places.push(dir);
    const path = join(dir, "store.db");
    const open = async (keyring?: Keyring) => new SqliteStore(path, keyring ? { keyring } : {});
    return { open, onDisk: (text: string) => occurrences(sqliteFiles(path), text) };
  };
  test.after(() => {
    for (const dir of places) rmSync(dir, { recursive: true, force: true });
  });
  test("an encrypted owner's fact ids are keyed, never on disk unkeyed, and stored once", async () => {
    const at = place();
    await keyedCase(at.open, at.onDisk);
  });
  test("an owner in clear keeps the SHA-256 ids", () => clearCase(place().open));
  test("a fact stored before ids were keyed is found again", () => beforeKeyedCase(place().open));
});

await onEveryPlace((backend, place, done) => {
  describe(`learned fact ids: ${backend}`, () => {
    for (const [name, run] of [
      ["keyed", keyedCase],
      ["clear", clearCase],
      ["before", beforeKeyedCase],
    ] as const) {
      test(`${name}`, async () => {
        const p = await place(`factids_${name}`);
        try {
          await run((keyring) => openAt(p, keyring));
        } finally {
          await done(p);
        }
      });
    }
  });
});
