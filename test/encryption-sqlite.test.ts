// Encryption at rest on SQLite files: an owner with a key has no plaintext in any byte of the files (the search
// index included), reads open it back, a wrong or missing key is DECRYPT_FAILED, a sealed row moved to another
// session does not open, and erasing the owner destroys its key so a copy of the file taken before cannot be read.
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { SessionManager } from "../src/manager/manager.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { masterKeyring } from "../src/store/crypto/keyring.js";
import { msg } from "../src/testing/contract/harness.js";
import {
  assertReadsBack,
  occurrences,
  randomKeyring,
  SECRET,
  seedOwners,
  textOf,
} from "./helpers/encryption.js";
import { sqliteFiles } from "./helpers/purge.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-encryption-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("SQLite: an encrypted owner's messages read back whole and leave no plaintext in the files", async () => {
  const path = join(dir, "roundtrip.db");
  const keyring = randomKeyring(["alice"]);
  const store = new SqliteStore(path, { keyring });
  const { manager, alice, bob } = await seedOwners(store);
  await assertReadsBack(store, alice);
  // A store-wide search hashes for no owner (the blind index: encryption-search-sqlite.test.ts); alice's own finds.
  assert.equal((await store.searchMessages(SECRET)).length, 0);
  assert.equal((await store.searchMessages(SECRET, { owner: "alice" })).length, 5);
  assert.equal((await store.searchMessages("bob plain")).length, 1);
  assert.equal((await manager.getHistory(bob)).length, 1);
  await store.close();
  assert.equal(
    occurrences(sqliteFiles(path), SECRET),
    0,
    "no plaintext of alice in the database, WAL or index",
  );
  assert.equal(occurrences(sqliteFiles(path), "edited secret"), 0);
  assert.ok(
    occurrences(sqliteFiles(path), "bob plain words") > 0,
    "an owner without a key is stored in clear",
  );
});

test("SQLite: a wrong key, a missing key and a store without its keyring are DECRYPT_FAILED, never garbage", async () => {
  const path = join(dir, "keys.db");
  const store = new SqliteStore(path, { keyring: randomKeyring(["alice"]) });
  const { alice, bob } = await seedOwners(store);
  await store.close();

  const wrong = new SqliteStore(path, { keyring: randomKeyring(["alice"]) });
  await assert.rejects(wrong.session(alice).getHistory(), { code: "DECRYPT_FAILED" });
  await assert.rejects(wrong.session(alice).getMessage("a1"), { code: "DECRYPT_FAILED" });
  // Nothing is written under a key that is not the owner's.
  await assert.rejects(wrong.session(alice).appendMessage(msg("w", "written with a wrong key")), {
    code: "DECRYPT_FAILED",
  });
  assert.equal((await wrong.session(bob).getHistory()).length, 1, "other owners read as before");
  await wrong.close();

  const none = new SqliteStore(path, { keyring: randomKeyring([]) });
  await assert.rejects(none.session(alice).getHistory(), { code: "DECRYPT_FAILED" });
  // An owner that had a key is never written in clear because the keyring lost it.
  await assert.rejects(none.session(alice).appendMessage(msg("p", "would be plaintext")), {
    code: "DECRYPT_FAILED",
  });
  await none.close();

  const plain = new SqliteStore(path);
  await assert.rejects(plain.session(alice).getHistory(), { code: "DECRYPT_FAILED" });
  await plain.close();
  assert.equal(occurrences(sqliteFiles(path), "written with a wrong key"), 0);
  assert.equal(occurrences(sqliteFiles(path), "would be plaintext"), 0);
});

test("SQLite: a sealed row copied into another session or message does not open", async () => {
  const keyring = randomKeyring(["alice"]);
  const store = new SqliteStore(join(dir, "swap.db"), { keyring });
  const manager = SessionManager.create(store);
  const { id: one } = await manager.create("one", { owner: "alice" });
  const { id: two } = await manager.create("two", { owner: "alice" });
  await manager.append(one, msg("m1", `first ${SECRET}`));
  await manager.append(one, msg("m2", "second"));
  await manager.append(two, msg("m1", "other session's m1"));
  const content = (sessionId: string, id: string) =>
    store.driver.get<{ content: string }>(
      `SELECT m.content FROM agent_messages m JOIN agent_session_heads h ON h.num = m.session_num
       WHERE h.session_id = ? AND m.id = ?`,
      [sessionId, id],
    )!.content;
  const setContent = (sessionId: string, id: string, value: string) =>
    store.driver.run(
      `UPDATE agent_messages SET content = ? WHERE id = ? AND session_num =
         (SELECT num FROM agent_session_heads WHERE session_id = ?)`,
      [value, id, sessionId],
    );
  setContent(two, "m1", content(one, "m1"));
  await assert.rejects(store.session(two).getMessage("m1"), { code: "DECRYPT_FAILED" });
  setContent(one, "m2", content(one, "m1"));
  await assert.rejects(store.session(one).getMessage("m2"), { code: "DECRYPT_FAILED" });
  await store.close();
});

test("SQLite: erasing an owner destroys its key; a copy of the file taken before cannot be read", async () => {
  const path = join(dir, "shred.db");
  const keyring = randomKeyring(["alice"]);
  const store = new SqliteStore(path, { keyring });
  const { manager, alice } = await seedOwners(store);
  store.driver.run("PRAGMA wal_checkpoint(TRUNCATE)");
  const copy = join(dir, "shred-copy.db");
  copyFileSync(path, copy);
  assert.equal(occurrences(sqliteFiles(copy), SECRET), 0, "the copy holds no plaintext: encrypted at rest");
  const receipt = await manager.eraseOwner("alice");
  assert.deepEqual(receipt.sessionIds, [alice]);
  assert.equal(keyring.keys.has("alice"), false, "the keyring forgot alice's key");
  await store.close();

  const backup = new SqliteStore(copy, { keyring });
  await assert.rejects(backup.session(alice).getHistory(), { code: "DECRYPT_FAILED" });
  await backup.close();
  assert.equal(occurrences(sqliteFiles(copy), SECRET), 0);
});

test("SQLite: a master keyring derives each owner's key; the keys differ and the store reopens with it", async () => {
  const path = join(dir, "master.db");
  const master = crypto.getRandomValues(new Uint8Array(32));
  const store = new SqliteStore(path, { keyring: masterKeyring(master) });
  const { alice, bob } = await seedOwners(store);
  await store.close();
  assert.equal(occurrences(sqliteFiles(path), SECRET), 0);
  assert.equal(occurrences(sqliteFiles(path), "bob plain words"), 0, "every owner is encrypted");
  const again = new SqliteStore(path, { keyring: masterKeyring(master) });
  assert.equal((await again.session(alice).getHistory()).length, 5);
  assert.equal(textOf((await again.session(bob).getHistory())[0]), "bob plain words");
  await again.close();
  const other = new SqliteStore(path, { keyring: masterKeyring(crypto.getRandomValues(new Uint8Array(32))) });
  await assert.rejects(other.session(bob).getHistory(), { code: "DECRYPT_FAILED" });
  await other.close();
  assert.throws(() => masterKeyring(new Uint8Array(8)), { code: "INVALID_ARGUMENT" });
});

test("SQLite: a message of an encrypted owner that reads as a payload pointer is refused; another owner's is kept", async () => {
  const store = new SqliteStore(":memory:", { keyring: randomKeyring(["alice"]) });
  const manager = SessionManager.create(store);
  const { id: alice } = await manager.create("alice", { owner: "alice" });
  const { id: bob } = await manager.create("bob", { owner: "bob" });
  const pointer = `attachment:sha256:${"0".repeat(64)}`;
  await assert.rejects(store.session(alice).appendMessage(msg("p", pointer)), {
    code: "INVALID_MESSAGE",
    issues: [{ path: "parts", rule: "invalid" }],
  });
  assert.equal((await store.session(alice).getHistory()).length, 0, "nothing was written");
  await store.session(bob).appendMessage(msg("p", "plain words"));
  assert.equal((await store.session(bob).getHistory()).length, 1);
  await store.close();
});
