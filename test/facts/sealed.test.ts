// Sealed facts (docs/FACTS.md, "Encryption") on SQLite (better-sqlite3, the sql tag) and Postgres (PGlite, a
// server): an encrypted owner's facts, of her and of her session, read back and are found by a word, a family, a
// phrase and their subject, with none of their words stored in clear; a sealed row copied onto another fact does not
// open; a key rotation re-seals them, so the new key alone reads and finds them and the old key alone opens none;
// an owner's erasure destroys her key, so a copy of the file taken before opens none of them.
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { PGlite } from "@electric-sql/pglite";
import type { FactScope } from "../../src/contract/facts.js";
import { SessionManager } from "../../src/manager/manager.js";
import { PostgresStore } from "../../src/postgres/index.js";
import type { PostgresSource } from "../../src/sql/engines/postgres/client.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { fact, ownedSession } from "../../src/testing/contract/facts-harness.js";
import { newPGlite } from "../fixtures/pglite.js";
import {
  dropSchema,
  pgliteSwitchedOff,
  postgresUnavailable,
  type Runner,
  testPool,
} from "../fixtures/postgres-db.js";
import { occurrences, randomKeyring } from "../helpers/encryption.js";
import { sqliteFiles } from "../helpers/purge.js";
import { aliceKeyring, newKey } from "../helpers/rekey-places.js";
import { sqlTagAgent } from "../helpers/sql-tag.js";

const MARK = "zqxfactmarkq";
const BOB = "zqxbobfactq";
type Store = SqliteStore | PostgresStore;

/** One storage the cases open stores on. */
interface Place {
  open(keyring?: Keyring): Promise<Store>;
  /** How many stored bytes (SQLite's files) or fact rows (Postgres: text, subject, vector) hold `text`. */
  traces(text: string): Promise<number>;
  /** Puts the stored text of fact `from` into fact `to` (scope keys and ids), as a copied row would. */
  copy(from: [string, string], to: [string, string]): Promise<void>;
  close(): Promise<void>;
}

function sqlitePlace(tag: boolean): Place {
  const dir = mkdtempSync(join(tmpdir(), "sealed-facts-"));
  const path = join(dir, "store.db");
  const open = (keyring?: Keyring) => {
    const options = keyring ? { keyring } : {};
    return Promise.resolve(
      tag ? new SqliteStore(sqlTagAgent(path), options) : new SqliteStore(path, options),
    );
  };
  return {
    open,
    traces: async (text) => occurrences(sqliteFiles(path), text),
    copy: async (from, to) => {
      const { db } = sqlTagAgent(path);
      db.prepare(
        `UPDATE agent_facts SET text = (SELECT text FROM agent_facts WHERE scope = ? AND id = ?),
           sealed_chars = 10 WHERE scope = ? AND id = ?`,
      ).run(...from, ...to);
      db.close();
    },
    close: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

function postgresPlace(db: Runner & PostgresSource, schema: string, close: () => Promise<void>): Place {
  const facts = `"${schema}".agent_facts`;
  return {
    open: (keyring) => PostgresStore.open(db, { schema, ...(keyring ? { keyring } : {}) }),
    traces: async (text) => {
      const { rows } = await db.query(
        `SELECT count(*)::int AS n FROM ${facts}
         WHERE strpos(text, $1) > 0 OR strpos(coalesce(about, ''), $1) > 0 OR strpos(coalesce(search::text, ''), $1) > 0`,
        [text],
      );
      return (rows[0] as { n: number }).n;
    },
    copy: async (from, to) => {
      await db.query(
        `UPDATE ${facts} SET text = (SELECT text FROM ${facts} WHERE scope = $1 AND id = $2), sealed_chars = 10
         WHERE scope = $3 AND id = $4`,
        [...from, ...to],
      );
    },
    close,
  };
}

const ALICE: FactScope = { owner: "alice" };
const ids = (hits: { fact: { id: string } }[]) => hits.map((h) => h.fact.id).sort();

/** Alice's session "a" (sealed), her facts f1, f2 and her session's f3; bob's session and fact in clear. */
async function seed(store: Store): Promise<void> {
  await ownedSession(store, "a", "alice", ["alice speaks", "noted"]);
  await ownedSession(store, "b", "bob", ["bob speaks"]);
  await store.facts.add(ALICE, [
    fact(`Alice adopted a greyhound named ${MARK}`, [["a", "a-0"]], { id: "f1", about: "Alice" }),
    fact("Alice prefers green tea in the morning", [["a", "a-0"]], { id: "f2", about: "Alice" }),
  ]);
  await store.facts.add({ sessionId: "a" }, [
    fact(`The session mentions ${MARK}`, [["a", "a-1"]], { id: "f3" }),
  ]);
  await store.facts.add({ owner: "bob" }, [fact(`Bob collects ${BOB}`, [["b", "b-0"]], { id: "g1" })]);
}

function cases(name: string, make: () => Promise<Place>, skip: string | false = false): void {
  describe(name, { skip }, () => {
    test(`${name}: her facts read back and are found blind; nothing of them in clear; a copied row does not open`, async () => {
      const place = await make();
      try {
        const key = newKey();
        const store = await place.open(aliceKeyring(key));
        await seed(store);
        const got = await store.facts.get(ALICE, "f1");
        assert.deepEqual([got?.text, got?.about], [`Alice adopted a greyhound named ${MARK}`, "Alice"]);
        assert.deepEqual(
          (await store.facts.list(ALICE)).facts.map((f) => f.text),
          ["Alice prefers green tea in the morning", `Alice adopted a greyhound named ${MARK}`],
        );
        assert.deepEqual(ids(await store.facts.search(ALICE, MARK)), ["f1"]);
        assert.deepEqual(ids(await store.facts.search(ALICE, "greyh*")), ["f1"], "a word family");
        assert.deepEqual(ids(await store.facts.search(ALICE, '"green tea"')), ["f2"], "a phrase");
        assert.deepEqual(ids(await store.facts.search(ALICE, "alice")), ["f1", "f2"], "their subject");
        assert.deepEqual(ids(await store.facts.search({ sessionId: "a" }, MARK)), ["f3"]);
        assert.deepEqual(ids(await store.facts.search({ owner: "bob" }, BOB)), ["g1"]);
        const exported = JSON.stringify((await store.facts.exportPage()).facts);
        assert.ok(exported.includes(`greyhound named ${MARK}`), "an export holds her facts opened");
        // A fact of hers with the id of her session's f3, for the copy below.
        await store.facts.add(ALICE, [fact("Alice walks daily", [["a", "a-0"]], { id: "f3" })]);
        await store.close();
        assert.equal(await place.traces(MARK), 0, "her facts' words are stored sealed");
        assert.equal(await place.traces("greyhound"), 0);
        assert.ok((await place.traces(BOB)) > 0, "bob's, without a key, in clear");

        // A sealed row moved onto another fact of her scope, or onto a fact of the same id in another scope, does
        // not open, with her key; the row left in place does.
        await place.copy(["o:alice", "f1"], ["o:alice", "f2"]);
        await place.copy(["s:a", "f3"], ["o:alice", "f3"]);
        const again = await place.open(aliceKeyring(key));
        assert.equal((await again.facts.get(ALICE, "f1"))?.text, `Alice adopted a greyhound named ${MARK}`);
        await assert.rejects(again.facts.get(ALICE, "f2"), { code: "DECRYPT_FAILED" });
        await assert.rejects(again.facts.get(ALICE, "f3"), { code: "DECRYPT_FAILED" });
        assert.equal((await again.facts.get({ sessionId: "a" }, "f3"))?.text, `The session mentions ${MARK}`);
        await again.close();
        const wrong = await place.open(aliceKeyring(newKey()));
        await assert.rejects(wrong.facts.search({ sessionId: "a" }, "nothing"), { code: "DECRYPT_FAILED" });
        await wrong.close();
      } finally {
        await place.close();
      }
    });

    test(`${name}: a key rotation re-seals her facts; the new key alone reads and finds them`, async () => {
      const place = await make();
      try {
        const [oldKey, key] = [newKey(), newKey()];
        const seeding = await place.open(aliceKeyring(oldKey));
        await seed(seeding);
        await seeding.close();
        const rotating = await place.open(aliceKeyring(key, [oldKey]));
        await rotating.rekey("alice");
        await rotating.close();
        const rotated = await place.open(aliceKeyring(key));
        assert.equal((await rotated.facts.get(ALICE, "f1"))?.text, `Alice adopted a greyhound named ${MARK}`);
        assert.deepEqual(ids(await rotated.facts.search(ALICE, "greyh*")), ["f1"]);
        assert.deepEqual(ids(await rotated.facts.search({ sessionId: "a" }, MARK)), ["f3"]);
        await rotated.close();
        const old = await place.open(aliceKeyring(oldKey));
        await assert.rejects(old.facts.list(ALICE), { code: "DECRYPT_FAILED" });
        await old.close();
      } finally {
        await place.close();
      }
    });
  });
}

test("SQLite: an owner's erasure deletes her facts and destroys her key: a copy taken before opens none of them", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "sealed-facts-erase-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const [path, copy] = [join(dir, "store.db"), join(dir, "copy.db")];
  const keyring = randomKeyring(["alice"]);
  const store = new SqliteStore(path, { keyring });
  await seed(store);
  await store.close();
  copyFileSync(path, copy);
  const erasing = new SqliteStore(path, { keyring });
  await new SessionManager(erasing).eraseOwner("alice");
  assert.deepEqual((await erasing.facts.list(ALICE)).facts, []);
  await erasing.close();
  const before = new SqliteStore(copy, { keyring });
  t.after(() => before.close());
  await assert.rejects(before.facts.get(ALICE, "f1"), { code: "DECRYPT_FAILED" });
  await assert.rejects(before.facts.search({ sessionId: "a" }, MARK), { code: "DECRYPT_FAILED" });
});

cases("SQLite (better-sqlite3)", async () => sqlitePlace(false));
cases("SQLite (sql tag)", async () => sqlitePlace(true));
cases(
  "PGlite",
  async () => {
    const db = (await newPGlite()) as unknown as Runner & PostgresSource;
    return postgresPlace(db, "sealed_facts", () => (db as unknown as PGlite).close());
  },
  pgliteSwitchedOff() ?? false,
);
const unavailable = await postgresUnavailable();
let n = 0;
cases(
  "Postgres",
  async () => {
    const pool = testPool(2);
    const schema = `agent_session_sealed_facts_${process.pid}_${n++}`;
    await dropSchema(pool, schema);
    return postgresPlace(pool, schema, async () => {
      await dropSchema(pool, schema);
      await pool.end();
    });
  },
  unavailable ?? false,
);
