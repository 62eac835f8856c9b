// Erasure on SQLite files: an owner's text is in no byte of the files after eraseOwner() and purge(), change log
// included; an erasure stopped by a fault inside a session's transaction leaves that session whole, and running
// it again completes.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { SqliteStore } from "../src/sqlite/store.js";
import { seedOwners, wholeOrGone } from "./helpers/erasure.js";
import { markersInFiles, sqliteFiles, total } from "./helpers/purge.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-erasure-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("SQLite: after eraseOwner and purge, the owner's text is in no byte of the files", async () => {
  const path = join(dir, "erase.db");
  const store = new SqliteStore(path, { changeLog: true });
  const { manager, alice, bob } = await seedOwners(store);
  assert.ok(total(markersInFiles(sqliteFiles(path))) > 0);
  const receipt = await manager.eraseOwner("alice");
  assert.deepEqual(receipt.sessionIds.sort(), [...alice].sort());
  assert.equal(receipt.messages, 15);
  assert.equal(receipt.compactions, 3);
  assert.equal(receipt.blocks, 3);
  assert.ok(receipt.changes >= 18, `the sessions' change-log rows went: ${receipt.changes}`);
  const report = await store.purge();
  assert.equal(report.complete, true, JSON.stringify(report));
  assert.equal(
    total(markersInFiles(sqliteFiles(path))),
    0,
    JSON.stringify(markersInFiles(sqliteFiles(path))),
  );
  assert.equal((await manager.getHistory(bob)).length, 1);
  await store.close();
  assert.equal(total(markersInFiles(sqliteFiles(path))), 0);
});

test("SQLite: an erasure stopped by a fault mid-session leaves it whole; running it again completes", async () => {
  const store = new SqliteStore(join(dir, "crash.db"));
  const { manager, alice } = await seedOwners(store);
  const victim = alice[1] ?? "";
  // A fault raised inside the victim's erasing transaction, after its messages were deleted in it.
  store.driver.run(`CREATE TRIGGER fault BEFORE DELETE ON agent_sessions WHEN OLD.id = '${victim}'
    BEGIN SELECT RAISE(ABORT, 'injected fault'); END`);
  await assert.rejects(manager.eraseOwner("alice"), /injected fault/);
  assert.ok((await wholeOrGone(manager, alice)) >= 1, "the faulted session is whole");
  assert.ok(await manager.get(victim));
  store.driver.run("DROP TRIGGER fault");
  await manager.eraseOwner("alice");
  assert.equal(await wholeOrGone(manager, alice), 0);
  await store.close();
});
