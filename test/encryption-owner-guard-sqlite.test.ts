// Sealed writes in SQLite stores opened with a keyring, two store objects on one file (as two processes would be),
// whose session was deleted and created again under its id by the other store, for another owner: the store's
// cached owner must not seal a write under the first owner's key into the second owner's session. A write under a
// key check the store verified earlier (no read) has its statement compare the session's owner too; a write that
// reads the check reads the session's owner with it. Either way a write that finds another owner looks it up again,
// as a first write does: sealed under the new owner's key when the keyring has it, refused DECRYPT_FAILED when not,
// in clear for an owner without a key (or no owner).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { SessionManager } from "../src/manager/manager.js";
import { SqliteStore } from "../src/sqlite/store.js";
import type { Keyring } from "../src/store/crypto/keyring.js";
import { msg } from "../src/testing/contract/harness.js";
import { randomKeyring, textOf } from "./helpers/encryption.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-owner-guard-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const id = "reused";

/** Runs `use` with two stores on a new file, A opened with `aRing` and B with `bRing`. */
async function twoStores(
  name: string,
  aRing: Keyring,
  bRing: Keyring,
  use: (a: SqliteStore, b: SqliteStore) => Promise<void>,
) {
  const path = join(dir, `${name}.db`);
  const a = new SqliteStore(path, { keyring: aRing });
  const b = new SqliteStore(path, { keyring: bRing });
  try {
    await use(a, b);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

/** The messages of session `id` in order: their ids and whether sealed. */
const stored = (store: SqliteStore) =>
  store.driver
    .all<{ id: string; sealed: number }>(
      `SELECT m.id, m.content LIKE '~sealed%' AS sealed FROM agent_messages m
       JOIN agent_session_heads h ON h.num = m.session_num WHERE h.session_id = ? ORDER BY m.seq`,
      [id],
    )
    .map((row) => ({ id: row.id, sealed: row.sealed === 1 }));

/** Store `b` deletes session `id` and creates it again for `owner`, with one message `first` when given. */
async function recreate(b: SqliteStore, owner: string, first?: string) {
  const manager = SessionManager.create(b);
  assert.equal(await manager.delete(id), true);
  await manager.create(`${owner} chat`, { id, owner });
  if (first) await b.session(id).appendMessage(msg(first, `${owner} says ${first}`));
}

/** Store `a` has session `id` for alice, its owner and key check verified by two sealed appends. */
async function aliceCached(a: SqliteStore) {
  await SessionManager.create(a).create("alice chat", { id, owner: "alice" });
  await a.session(id).appendMessage(msg("a0", "alice sealed"));
  await a.session(id).appendMessage(msg("a1", "alice sealed again"));
}

test("SQLite: an append and an overlay under a verified check, after the session became another owner's", async () => {
  const ring = randomKeyring(["alice", "bob"]);
  await twoStores("verified", ring, ring, async (a, b) => {
    await aliceCached(a);
    await recreate(b, "bob", "b0");
    await a.session(id).appendMessage(msg("x0", "written by A for bob"));
    await a.session(id).appendMessage(msg("x1", "written by A for bob again"));
    assert.deepEqual(
      (await b.session(id).getHistory()).map(textOf),
      ["bob says b0", "written by A for bob", "written by A for bob again"],
      "bob reads A's writes",
    );
    assert.deepEqual(stored(b), [
      { id: "b0", sealed: true },
      { id: "x0", sealed: true },
      { id: "x1", sealed: true },
    ]);
    // A verified bob's check: its overlay of the session, alice's again, is sealed under alice's key.
    await recreate(b, "alice", "m0");
    await a.session(id).addCompaction("A's summary for alice", "m0", "m0");
    assert.deepEqual(
      (await b.session(id).getCompactions()).map((c) => c.summary),
      ["A's summary for alice"],
    );
  });
});

test("SQLite: a write that reads the check reads the session's owner with it", async () => {
  const ring = randomKeyring(["alice", "bob"]);
  await twoStores("read", ring, ring, async (a, b) => {
    // A only read alice's session (its owner cached, no check verified): its first append reads the check.
    await SessionManager.create(b).create("alice chat", { id, owner: "alice" });
    await b.session(id).appendMessage(msg("a0", "alice sealed"));
    assert.equal(textOf(await a.session(id).getMessage("a0")), "alice sealed");
    await recreate(b, "bob", "b0");
    await a.session(id).appendMessage(msg("x0", "written by A for bob"));
    assert.equal(textOf(await b.session(id).getMessage("x0")), "written by A for bob");
    // An update always reads the check: the session is alice's again.
    await recreate(b, "alice", "m0");
    await a.session(id).updateMessage(msg("m0", "rewritten by A for alice"));
    assert.equal(textOf(await b.session(id).getMessage("m0")), "rewritten by A for alice");
  });
});

test("SQLite: refused for an owner whose key the store lacks, in clear for one without a key or no owner", async () => {
  await twoStores("missing", randomKeyring(["alice"]), randomKeyring(["bob"]), async (a, b) => {
    await aliceCached(a);
    await recreate(b, "bob", "b0");
    await assert.rejects(a.session(id).appendMessage(msg("x0", "not under alice's key")), {
      code: "DECRYPT_FAILED",
      message: /Owner "bob" has encrypted content but the keyring has no key for it/,
    });
    assert.deepEqual(stored(b), [{ id: "b0", sealed: true }]);
    await recreate(b, "carol");
    await a.session(id).appendMessage(msg("c0", "carol has no key"));
    assert.deepEqual(stored(b), [{ id: "c0", sealed: false }]);
    assert.equal(await SessionManager.create(b).delete(id), true);
    await a.session(id).appendMessage(msg("n0", "no owner now"));
    assert.deepEqual(stored(b), [{ id: "n0", sealed: false }]);
    assert.equal(textOf(await b.session(id).getMessage("n0")), "no owner now");
  });
});
