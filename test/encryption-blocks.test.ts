// Sealed context blocks and search entries: an encrypted owner's blocks (auto-wired, the frozen prompt, the
// memory-tool directory) and entries read back whole, leave no plaintext in the store's bytes, are searched through
// the keyed blind index exactly as in clear, refuse a wrong or missing key, and go with eraseOwner.
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { PGlite } from "@electric-sql/pglite";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import { memoryDirectoryKey } from "../src/context/block-keys.js";
import { EntrySearchProvider } from "../src/context/providers.js";
import { keyScope, ownerOfLongest } from "../src/context/sealing.js";
import { SessionManager } from "../src/manager/manager.js";
import { PostgresStore } from "../src/postgres/index.js";
import { Session } from "../src/session/session.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { msg } from "../src/testing/contract/harness.js";
import { newPGlite } from "./fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";
import { occurrences, randomKeyring } from "./helpers/encryption.js";
import { markersInRelations, sqliteFiles, total } from "./helpers/purge.js";
import {
  assertAliceReads,
  assertSameHitsAsClear,
  BLOCK_SECRET,
  contextSession,
  DIRECTORY_SECRET,
  ENTRY_SECRET,
  seed,
} from "./helpers/sealed-context.js";

const SECRETS = [BLOCK_SECRET, ENTRY_SECRET, DIRECTORY_SECRET, "deployment", "crème"];

const dir = mkdtempSync(join(tmpdir(), "agent-session-sealblk-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("whose a key is: the owner a memory directory names, else the sessions its suffixes name, longest first", () => {
  assert.deepEqual(keyScope("_memories_owner_a_b"), { owner: "a_b" });
  assert.deepEqual(keyScope("_system_prompt_s1"), { sessions: ["prompt_s1", "s1"] });
  assert.deepEqual(keyScope("notes_team_a"), { sessions: ["team_a", "a"] });
  assert.deepEqual(keyScope("memory"), { sessions: [] });
  assert.deepEqual(keyScope("memory_"), { sessions: [] });
  const found = [
    { id: "a", owner: "bob" },
    { id: "team_a", owner: null },
  ];
  assert.equal(ownerOfLongest(found), null, "the longest registered suffix decides, even without an owner");
  assert.equal(ownerOfLongest([{ id: "a", owner: "bob" }]), "bob");
});

test("SQLite: an encrypted owner's blocks and entries read back, search through the blind index, and leave no plaintext", async () => {
  const path = join(dir, "roundtrip.db");
  const store = new SqliteStore(path, { keyring: randomKeyring(["alice"]) });
  const { alice, bob, a } = await seed(store);
  await assertAliceReads(store, alice);
  // The model's search_context finds the same entries as in clear; the session reads its block back.
  const tools = await a.tools();
  const found = await tools.search_context!.execute({ label: "facts", query: `${ENTRY_SECRET} cats` });
  assert.ok(found.includes("diet") && found.includes("pets"), found);
  assert.equal(await store.blocks.getBlock(`memory_${bob}`), "bob plain block");
  assert.equal((await store.entries.searchEntries(`facts_${bob}`, "plain")).length, 1);
  // Compare-and-set compares the opened text.
  assert.equal(await store.blocks.setBlockIf(`memory_${alice}`, `alice likes ${BLOCK_SECRET}`, "next"), true);
  assert.equal(await store.blocks.setBlockIf(`memory_${alice}`, `alice likes ${BLOCK_SECRET}`, "x"), false);
  await store.blocks.setBlock(`memory_${alice}`, `alice likes ${BLOCK_SECRET}`);
  await store.close();
  const files = sqliteFiles(path);
  for (const secret of SECRETS) {
    assert.equal(occurrences(files, secret), 0, `no "${secret}" in the database, WAL or index`);
  }
  assert.ok(occurrences(files, "bob plain block") > 0, "an owner without a key is stored in clear");
});

test("SQLite: a wrong key, no key or no keyring is DECRYPT_FAILED (the tool answers Error:), and nothing is written in clear", async () => {
  const path = join(dir, "keys.db");
  const store = new SqliteStore(path, { keyring: randomKeyring(["alice"]) });
  const { alice, bob } = await seed(store);
  await store.close();
  for (const keyring of [randomKeyring(["alice"]), randomKeyring([]), undefined]) {
    const other = new SqliteStore(path, keyring ? { keyring } : {});
    await assert.rejects(other.blocks.getBlock(`memory_${alice}`), { code: "DECRYPT_FAILED" });
    await assert.rejects(other.blocks.getBlock(memoryDirectoryKey("owner", "alice")), {
      code: "DECRYPT_FAILED",
    });
    if (keyring) {
      await assert.rejects(other.entries.searchEntries(`facts_${alice}`, "alice"), {
        code: "DECRYPT_FAILED",
      });
      await assert.rejects(other.blocks.setBlock(`memory_${alice}`, "would be plaintext"), {
        code: "DECRYPT_FAILED",
      });
      await assert.rejects(other.entries.setEntry(`facts_${alice}`, "k", "would be plaintext"), {
        code: "DECRYPT_FAILED",
      });
      // A Session whose blocks do not open does not open either; a search block alone answers the tool's Error.
      await assert.rejects(contextSession(other, alice).tools(), { code: "DECRYPT_FAILED" });
      const searchOnly = Session.create(other)
        .withContext("facts", { provider: new EntrySearchProvider(other.entries, `facts_${alice}`) })
        .forSession(alice);
      const tools = await searchOnly.tools();
      const answer = await tools.search_context!.execute({ label: "facts", query: "alice" });
      assert.match(answer, /^Error: /);
    }
    assert.equal(await other.blocks.getBlock(`memory_${bob}`), "bob plain block");
    await other.close();
  }
  assert.equal(occurrences(sqliteFiles(path), "would be plaintext"), 0);
});

test("SQLite: export opens an encrypted owner's blocks and entries, and an import seals them again", async () => {
  const keyring = randomKeyring(["alice"]);
  const source = new SqliteStore(join(dir, "export.db"), { keyring });
  const { alice } = await seed(source);
  const target = new SqliteStore(join(dir, "import.db"), { keyring });
  const rows = [];
  for await (const row of source.transfer.exportRows()) rows.push(row);
  assert.ok(JSON.stringify(rows).includes(ENTRY_SECRET), "an export is opened");
  await target.transfer.importSession(source.transfer.exportSession(alice));
  await target.transfer.importRows(source.transfer.exportRows());
  await assertAliceReads(target, alice);
  await source.close();
  await target.close();
  assert.equal(occurrences(sqliteFiles(join(dir, "import.db")), ENTRY_SECRET), 0);
  assert.equal(occurrences(sqliteFiles(join(dir, "import.db")), BLOCK_SECRET), 0);
});

test("SQLite: eraseOwner removes the owner's blocks and entries, and a copy taken before no longer opens", async () => {
  const path = join(dir, "erase.db");
  const keyring = randomKeyring(["alice"]);
  const store = new SqliteStore(path, { keyring });
  const { alice, bob } = await seed(store);
  await store.close();
  copyFileSync(path, join(dir, "erase-copy.db"));
  const reopened = new SqliteStore(path, { keyring });
  // The manager knows the labels (erasure finds blocks and entries by the session's keys).
  const erasing = SessionManager.create(reopened).withContext("memory").withContext("facts");
  const receipt = await erasing.eraseOwner("alice");
  // The block, the prompt and the owner's directory; the three entries.
  assert.deepEqual([receipt.blocks, receipt.entries], [3, 3]);
  assert.equal(await reopened.blocks.getBlock(memoryDirectoryKey("owner", "alice")), null);
  assert.equal(await reopened.blocks.getBlock(`memory_${alice}`), null);
  assert.equal(await reopened.entries.countEntries(`facts_${alice}`), 0);
  assert.equal(await reopened.blocks.getBlock(`memory_${bob}`), "bob plain block");
  await reopened.close();
  const copy = new SqliteStore(join(dir, "erase-copy.db"), { keyring });
  await assert.rejects(copy.blocks.getBlock(`memory_${alice}`), { code: "DECRYPT_FAILED" });
  await copy.close();
});

test("SQLite: rekey re-seals an owner's blocks and entries with its messages; the old key is then not needed", async () => {
  const path = join(dir, "rekey.db");
  const old = randomKeyring(["alice"]);
  const store = new SqliteStore(path, { keyring: old });
  const { manager, alice } = await seed(store);
  await manager.append(alice, msg("m1", "alice message"));
  await store.close();
  const next = crypto.getRandomValues(new Uint8Array(32));
  const oldKey = old.keys.get("alice")!;
  const rotating = new SqliteStore(path, { keyring: { key: () => next, previousKeys: () => [oldKey] } });
  await assertAliceReads(rotating, alice);
  await rotating.rekey("alice");
  await rotating.close();
  const rotated = new SqliteStore(path, { keyring: { key: () => next } });
  await assertAliceReads(rotated, alice);
  await rotated.close();
});

/**
 * The Postgres round (a server schema or PGlite): reads back, entry searches as in clear (the same seed in
 * `${schema}_clear` of `clearDb`, without a keyring), no secret in any page of the schema's relations (the GIN
 * index included), refusals (search_context answers `Error: …`), and eraseOwner removing blocks and entries.
 */
async function postgresRound(db: Runner, schema: string, clearDb: Runner) {
  const keyring = randomKeyring(["alice"]);
  const store = await PostgresStore.open(db, { schema, keyring });
  const { alice, bob, a } = await seed(store);
  await assertAliceReads(store, alice);
  const clear = await PostgresStore.open(clearDb, { schema: `${schema}_clear` });
  await assertSameHitsAsClear(store, alice, clear, (await seed(clear)).alice);
  await clear.close();
  // The model's search_context finds the same entries as in clear.
  const tools = await a.tools();
  const found = await tools.search_context!.execute({ label: "facts", query: `${ENTRY_SECRET} cats` });
  assert.ok(found.includes("diet") && found.includes("pets"), found);
  assert.equal(await store.blocks.setBlockIf(`memory_${alice}`, `alice likes ${BLOCK_SECRET}`, "next"), true);
  assert.equal(await store.blocks.setBlockIf(`memory_${alice}`, `alice likes ${BLOCK_SECRET}`, "x"), false);
  await store.blocks.setBlock(`memory_${alice}`, `alice likes ${BLOCK_SECRET}`);
  assert.equal((await store.entries.searchEntries(`facts_${bob}`, "plain")).length, 1);
  const rows = [];
  for await (const row of store.transfer.exportRows()) rows.push(row);
  assert.ok(JSON.stringify(rows).includes(ENTRY_SECRET), "an export is opened");
  await db.query("CHECKPOINT");
  for (const secret of SECRETS) {
    const found = await markersInRelations(db, schema, secret);
    assert.equal(total(found), 0, `${secret}: ${JSON.stringify(found)}`);
  }
  assert.ok(total(await markersInRelations(db, schema, "bob plain block")) > 0);
  // Bob's entry is indexed in clear: the page check does see index words (this is no vacuous pass).
  const bobIndex = await markersInRelations(db, schema, "plain");
  const index = Object.keys(bobIndex).find((name) => name.endsWith("agent_search_entries_search"));
  assert.ok(index !== undefined && (bobIndex[index] ?? 0) > 0, JSON.stringify(bobIndex));
  for (const keys of [randomKeyring(["alice"]), randomKeyring([])]) {
    const wrong = new PostgresStore(db, { schema, keyring: keys });
    await assert.rejects(wrong.entries.searchEntries(`facts_${alice}`, "alice"), { code: "DECRYPT_FAILED" });
    const searchOnly = Session.create(wrong)
      .withContext("facts", { provider: new EntrySearchProvider(wrong.entries, `facts_${alice}`) })
      .forSession(alice);
    const answer = await (await searchOnly.tools()).search_context!.execute({
      label: "facts",
      query: "alice",
    });
    assert.match(answer, /^Error: /);
    await wrong.close();
  }
  const wrong = new PostgresStore(db, { schema, keyring: randomKeyring(["alice"]) });
  await assert.rejects(wrong.blocks.getBlock(`memory_${alice}`), { code: "DECRYPT_FAILED" });
  await assert.rejects(wrong.blocks.setBlock(`memory_${alice}`, "would be plaintext"), {
    code: "DECRYPT_FAILED",
  });
  await assert.rejects(wrong.entries.setEntry(`facts_${alice}`, "k", "would be plaintext"), {
    code: "DECRYPT_FAILED",
  });
  await assert.rejects(wrong.blocks.setBlockIf(`memory_${alice}`, "a", "would be plaintext"), {
    code: "DECRYPT_FAILED",
  });
  await wrong.close();
  const plain = new PostgresStore(db, { schema });
  await assert.rejects(plain.blocks.getBlock(memoryDirectoryKey("owner", "alice")), {
    code: "DECRYPT_FAILED",
  });
  assert.equal(await plain.blocks.getBlock(`memory_${bob}`), "bob plain block");
  await plain.close();
  assert.equal(total(await markersInRelations(db, schema, "would be plaintext")), 0);
  const receipt = await SessionManager.create(store)
    .withContext("memory")
    .withContext("facts")
    .eraseOwner("alice");
  assert.deepEqual([receipt.blocks, receipt.entries], [3, 3]);
  assert.equal(await store.entries.countEntries(`facts_${alice}`), 0);
  assert.deepEqual(await store.entries.searchEntries(`facts_${alice}`, "alice"), []);
  await store.close();
}

test("PGlite: an encrypted owner's blocks and entries are sealed, read back, searched as in clear, refused without the key, erased", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const root = mkdtempSync(join(tmpdir(), "agent-session-sealblk-pglite-"));
  try {
    const dataDir = join(root, "db");
    const db = await newPGlite({ dataDir, extensions: { pageinspect } });
    // The same seed in clear lives in another database: its words would be in this one's files.
    const clearDb = await newPGlite();
    await postgresRound(db, "sealed", clearDb);
    await clearDb.close();
    await db.close();
    for (const secret of SECRETS) assert.equal(occurrences(filesUnder(dataDir), secret), 0, secret);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

const unavailable = await postgresUnavailable();
describe("Postgres: sealed blocks and entries", { skip: unavailable ?? false }, () => {
  const pool = unavailable ? undefined : testPool(2);
  after(() => pool?.end());
  test("sealed round trip, entries searched as in clear; no byte of a secret in any page of the store's relations", async () => {
    const schema = `agent_session_sealblk_${process.pid}`;
    await dropSchema(pool!, schema);
    await dropSchema(pool!, `${schema}_clear`);
    try {
      await postgresRound(pool!, schema, pool!);
    } finally {
      await dropSchema(pool!, schema);
      await dropSchema(pool!, `${schema}_clear`);
    }
  });
});

/** A pg Pool or PGlite: what the page check queries. */
type Runner = PGlite | { query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }> };

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: "utf8" })
    .map((name) => join(root, name))
    .filter((path) => statSync(path).isFile());
}

test("PGlite: while a rotation is under way, a search finds entries sealed under either key", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  try {
    const old = randomKeyring(["alice"]);
    const store = await PostgresStore.open(db, { schema: "rotating", keyring: old });
    const { alice } = await seed(store);
    await store.close();
    const next = crypto.getRandomValues(new Uint8Array(32));
    const oldKey = old.keys.get("alice")!;
    const rotating = new PostgresStore(db, {
      schema: "rotating",
      keyring: { key: () => next, previousKeys: () => [oldKey] },
    });
    await assertAliceReads(rotating, alice);
    // A write under the new key starts the rotation; the entries under the old key are still found beside it.
    await rotating.entries.setEntry(`facts_${alice}`, "trip", `alice flies to ${ENTRY_SECRET}ville`);
    assert.deepEqual(
      (await rotating.entries.searchEntries(`facts_${alice}`, "daily")).map((h) => h.key),
      ["diet"],
    );
    assert.deepEqual(
      (await rotating.entries.searchEntries(`facts_${alice}`, "flies")).map((h) => h.key),
      ["trip"],
    );
    await rotating.close();
  } finally {
    await db.close();
  }
});
