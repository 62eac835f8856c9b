// Sealed context blocks and search entries: an encrypted owner's blocks (auto-wired, the frozen prompt, the
// memory-tool directory) and entries read back whole, leave no plaintext in the store's bytes, are searched through
// the keyed blind index (SQLite) exactly as in clear, refuse a wrong or missing key, and go with eraseOwner.
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { memoryDirectoryKey } from "../src/context/block-keys.js";
import { EntrySearchProvider } from "../src/context/providers.js";
import type { ContextCapableStore } from "../src/contract/context.js";
import type { RegistryCapableStore } from "../src/contract/registry.js";
import type { TransferCapableStore } from "../src/contract/transfer.js";
import { SessionManager } from "../src/manager/manager.js";
import { Session } from "../src/session/session.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { occurrences, randomKeyring } from "./helpers/encryption.js";
import { sqliteFiles } from "./helpers/purge.js";

type Store = ContextCapableStore & RegistryCapableStore & TransferCapableStore;

/** Words that must never be in the store's bytes for alice (each one token, as an index keeps terms). */
const BLOCK_SECRET = "zqxblocksecretq";
const ENTRY_SECRET = "zqxentrysecretq";
const DIRECTORY_SECRET = "zqxdirectorysecretq";

const dir = mkdtempSync(join(tmpdir(), "agent-session-sealblk-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A Session of `id` with an auto-wired block, its cached prompt and a search block filed under its key. */
function contextSession(store: Store, id: string): Session {
  return Session.create(store)
    .withCachedPrompt()
    .withContext("memory")
    .withContext("facts", { provider: new EntrySearchProvider(store.entries, `facts_${id}`) })
    .forSession(id);
}

/** Alice (with a key) and bob (without) each get a block, a prompt, entries and a directory. */
async function seed(store: Store) {
  const manager = SessionManager.create(store);
  const { id: alice } = await manager.create("alice chat", { owner: "alice" });
  const { id: bob } = await manager.create("bob chat", { owner: "bob" });
  const a = contextSession(store, alice);
  await a.replaceContextBlock("memory", `alice likes ${BLOCK_SECRET}`);
  await a.freezeSystemPrompt();
  const facts = new EntrySearchProvider(store.entries, `facts_${alice}`);
  await facts.set("diet", `alice eats ${ENTRY_SECRET} daily`);
  await facts.set("pets", "alice deploys cats and a deployment of dogs");
  await facts.set("café", "alice drinks a café crème");
  await store.blocks.setBlock(memoryDirectoryKey("owner", "alice"), `notes ${DIRECTORY_SECRET}`);
  const b = contextSession(store, bob);
  await b.replaceContextBlock("memory", "bob plain block");
  await new EntrySearchProvider(store.entries, `facts_${bob}`).set("diet", "bob plain entry");
  return { manager, alice, bob, a };
}

/** What a reader sees of alice's context: the block, the prompt, the directory and entry searches. */
async function assertAliceReads(store: Store, alice: string) {
  assert.equal(await store.blocks.getBlock(`memory_${alice}`), `alice likes ${BLOCK_SECRET}`);
  const prompt = await store.blocks.getBlock(`_system_prompt_${alice}`);
  assert.ok(prompt?.includes(BLOCK_SECRET), "the frozen prompt opens");
  assert.equal(
    await store.blocks.getBlock(memoryDirectoryKey("owner", "alice")),
    `notes ${DIRECTORY_SECRET}`,
  );
  const label = `facts_${alice}`;
  assert.deepEqual(await store.entries.searchEntries(label, ENTRY_SECRET), [
    { key: "diet", content: `alice eats ${ENTRY_SECRET} daily` },
  ]);
  // Word families, phrases, accents and keys are found as in clear.
  assert.deepEqual(
    (await store.entries.searchEntries(label, "deploy")).map((h) => h.key),
    ["pets"],
  );
  assert.deepEqual(
    (await store.entries.searchEntries(label, '"cats and"')).map((h) => h.key),
    ["pets"],
  );
  assert.deepEqual(
    (await store.entries.searchEntries(label, "creme")).map((h) => h.key),
    ["café"],
  );
  assert.deepEqual(
    (await store.entries.searchEntries(label, "diet")).map((h) => h.key),
    ["diet"],
  );
  assert.equal(await store.entries.countEntries(label), 3);
}

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
  for (const secret of [BLOCK_SECRET, ENTRY_SECRET, DIRECTORY_SECRET, "deployment", "crème"]) {
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
