// A SQLite row's content hash is written by updates only: an append in clear stores none (43 bytes of a small
// message's row), and an update of identical content reads the row instead, so it still writes nothing.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { SqliteStore } from "../src/sqlite/store.js";
import { msg } from "../src/testing/contract/harness.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-content-hash-"));
after(() => rmSync(dir, { recursive: true, force: true }));

type Row = { content: string; content_hash: string | null };
const rowOf = (store: SqliteStore, id: string) =>
  store.driver.get<Row>("SELECT content, content_hash FROM agent_messages WHERE id = ?", [id])!;
const changes = (store: SqliteStore) => store.driver.get<{ n: number }>("SELECT total_changes() AS n")!.n;

test("SQLite: an append in clear stores no hash; an identical update writes nothing, a changed one is hashed", async () => {
  const store = new SqliteStore(join(dir, "clear.db"));
  const session = store.session("s1");
  await session.appendMessage(msg("m1", "first words"));
  const appended = rowOf(store, "m1");
  assert.equal(appended.content_hash, null);

  const before = changes(store);
  assert.equal((await session.updateMessage(msg("m1", "first words")))?.updated, false);
  assert.equal((await session.upsertMessage!(msg("m1", "first words"))).updated, false);
  assert.equal(changes(store), before, "nothing was written");

  assert.equal((await session.updateMessage(msg("m1", "second words")))?.updated, true);
  const changed = rowOf(store, "m1");
  assert.ok(changed.content_hash !== null);
  assert.equal((await session.updateMessage(msg("m1", "second words")))?.updated, false);
  assert.equal((await session.updateMessage(msg("m1", "first words")))?.updated, true);
  assert.equal((await store.searchMessages("second")).length, 0);
  assert.equal((await store.searchMessages("first")).length, 1);
  await store.close();
});
