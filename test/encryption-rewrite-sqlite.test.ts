// The cheaper sealed writes of SQLite. An encrypted owner's appended rows carry no content hash (the keyed hash was a
// sixth of a sealed append): an update of identical content opens the row instead and writes nothing, other content
// is written and hashed, and a row stored in clear before its owner had a key is sealed by an identical update. An
// append or overlay under a key check the store verified earlier is refused once another process changed the check.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { SessionManager } from "../src/manager/manager.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { msg } from "../src/testing/contract/harness.js";
import { randomKeyring, SECRET, textOf } from "./helpers/encryption.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-encryption-rewrite-"));
after(() => rmSync(dir, { recursive: true, force: true }));

type Row = { content: string; content_hash: string | null };
const rowOf = (store: SqliteStore, id: string) =>
  store.driver.get<Row>("SELECT content, content_hash FROM agent_messages WHERE id = ?", [id])!;

test("SQLite: a sealed append stores no hash; an identical update writes nothing, a changed one is hashed", async () => {
  const store = new SqliteStore(join(dir, "rewrite.db"), { keyring: randomKeyring(["alice"]) });
  const manager = SessionManager.create(store);
  const { id } = await manager.create("alice chat", { owner: "alice" });
  const session = store.session(id);
  await session.appendMessage(msg("m1", `first ${SECRET}`));
  const appended = rowOf(store, "m1");
  assert.equal(appended.content_hash, null);
  assert.ok(appended.content.startsWith("~sealed2:"));

  assert.equal((await session.updateMessage(msg("m1", `first ${SECRET}`)))?.updated, false);
  assert.equal(rowOf(store, "m1").content, appended.content, "the row was not written again");
  const upserted = await session.upsertMessage!(msg("m1", `first ${SECRET}`));
  assert.equal(upserted.updated, false);

  assert.equal((await session.updateMessage(msg("m1", `second ${SECRET}`)))?.updated, true);
  const changed = rowOf(store, "m1");
  assert.ok(changed.content.startsWith("~sealed2:") && changed.content_hash !== null);
  assert.equal(textOf(await session.getMessage("m1")), `second ${SECRET}`);
  // From now on the row's keyed hash answers.
  assert.equal((await session.updateMessage(msg("m1", `second ${SECRET}`)))?.updated, false);
  assert.equal(rowOf(store, "m1").content, changed.content);
  await store.close();
});

test("SQLite: a row stored in clear before its owner had a key is sealed by an identical update", async () => {
  const path = join(dir, "late-key.db");
  const clear = new SqliteStore(path, { keyring: randomKeyring([]) });
  const { id } = await SessionManager.create(clear).create("bob chat", { owner: "bob" });
  await clear.session(id).appendMessage(msg("b1", `bob ${SECRET}`));
  assert.ok(!rowOf(clear, "b1").content.startsWith("~sealed"));
  await clear.close();

  const keyed = new SqliteStore(path, { keyring: randomKeyring(["bob"]) });
  assert.equal((await keyed.session(id).updateMessage(msg("b1", `bob ${SECRET}`)))?.updated, true);
  assert.ok(rowOf(keyed, "b1").content.startsWith("~sealed2:"));
  assert.equal(textOf(await keyed.session(id).getMessage("b1")), `bob ${SECRET}`);
  await keyed.close();
});

test("SQLite: a store whose cached key check went stale (a rotation elsewhere) writes nothing under the old key", async () => {
  const path = join(dir, "stale.db");
  const [oldKey, newKey] = [
    crypto.getRandomValues(new Uint8Array(32)),
    crypto.getRandomValues(new Uint8Array(32)),
  ];
  const stale = new SqliteStore(path, { keyring: { key: (o) => (o === "alice" ? oldKey : undefined) } });
  const { id } = await SessionManager.create(stale).create("alice chat", { owner: "alice" });
  const session = stale.session(id);
  // Warm: these writes verified the old key's check, so the next ones do not read it again (their insert checks it).
  await session.appendMessage(msg("m1", `first ${SECRET}`));
  await session.addCompaction("a summary", "m1", "m1");
  assert.equal(
    (await session.appendMessage(msg("m1", `first ${SECRET}`)))?.inserted,
    false,
    "a retried append",
  );
  await session.appendMessage(msg("m2", `second ${SECRET}`));

  // Another process writes under a new key whose previous key is the old one: the rotation starts there.
  const rotating = new SqliteStore(path, {
    keyring: { key: (o) => (o === "alice" ? newKey : undefined), previousKeys: () => [oldKey] },
  });
  await rotating.session(id).appendMessage(msg("m3", `third ${SECRET}`));

  await assert.rejects(session.appendMessage(msg("m4", "under the old key")), { code: "DECRYPT_FAILED" });
  await assert.rejects(session.addCompaction("another summary", "m1", "m2"), { code: "DECRYPT_FAILED" });
  const count = (sql: string) => rotating.driver.get<{ n: number }>(sql)!.n;
  assert.equal(count("SELECT count(*) AS n FROM agent_messages WHERE id = 'm4'"), 0);
  assert.equal(count("SELECT count(*) AS n FROM agent_compactions"), 1);
  assert.equal(textOf(await rotating.session(id).getMessage("m2")), `second ${SECRET}`);
  await Promise.all([stale.close(), rotating.close()]);
});
