// An encrypted owner's appended rows carry no content hash on SQLite (the keyed hash was a sixth of a sealed append):
// an update of identical content opens the row instead and writes nothing, other content is written and hashed,
// and a row stored in clear before its owner had a key is sealed by an identical update, never kept in clear.
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
