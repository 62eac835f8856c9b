// An encrypted owner's streamed answer (the kept chunks of agent-session/ai's resumable streams) is sealed as its
// messages are: no chunk is in the file or a page in clear, the keyed store replays it whole, a chunk moved to
// another place or stream does not open, and a copy of the file taken before eraseOwner replays nothing once the
// key is destroyed (docs/PRIVACY.md, "Streamed answers").
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import type { StreamCapableStore } from "../../src/contract/streams.js";
import { SessionManager } from "../../src/manager/manager.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { newPGlite } from "../fixtures/pglite.js";
import { pgliteSwitchedOff } from "../fixtures/postgres-db.js";
import { occurrences, randomKeyring } from "../helpers/encryption.js";
import { markersInRelations, sqliteFiles, total } from "../helpers/purge.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-stream-seal-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = "zqxstreamsecretq";
const CHUNKS = [0, 1, 2].map((seq) => ({ seq, chunk: `data: {"delta":"${SECRET} ${seq}"}\n\n` }));

/** Alice's session with a finished stream of three chunks, and bob's in clear (one chunk starting with `~`). */
async function stream(store: StreamCapableStore & Parameters<typeof SessionManager.create>[0]) {
  const manager = SessionManager.create(store);
  const { id: alice } = await manager.create("alice chat", { owner: "alice" });
  const { id: bob } = await manager.create("bob chat", { owner: "bob" });
  await store.streams.start(alice, "s1", 1);
  assert.equal(await store.streams.append(alice, "s1", CHUNKS, 2), true);
  await store.streams.end(alice, "s1", null, 3);
  await store.streams.start(bob, "b1", 1);
  await store.streams.append(
    bob,
    "b1",
    [
      { seq: 0, chunk: "~sealed2:looks:sealed" },
      { seq: 1, chunk: "bob plain chunk" },
    ],
    2,
  );
  return { manager, alice, bob };
}

async function assertReplays(store: StreamCapableStore, alice: string, bob: string) {
  assert.deepEqual((await store.streams.read(alice, "s1", -1, 10))?.chunks, CHUNKS);
  assert.deepEqual((await store.streams.read(alice, "s1", 0, 1))?.chunks, [CHUNKS[1]]);
  assert.deepEqual(
    (await store.streams.read(bob, "b1", -1, 10))?.chunks.map((c) => c.chunk),
    ["~sealed2:looks:sealed", "bob plain chunk"],
  );
}

test("SQLite: an encrypted owner's stream chunks are sealed, replay whole, and a copy taken before eraseOwner replays nothing", async () => {
  const path = join(dir, "streams.db");
  const keyring = randomKeyring(["alice"]);
  const store = new SqliteStore(path, { keyring });
  const { alice, bob } = await stream(store);
  await assertReplays(store, alice, bob);
  // A chunk moved to another place does not open (bound to session, stream and seq).
  store.driver.run("UPDATE agent_stream_chunks SET seq = 9 WHERE session_id = ? AND seq = 2", [alice]);
  await assert.rejects(store.streams.read(alice, "s1", 1, 10), { code: "DECRYPT_FAILED" });
  store.driver.run("UPDATE agent_stream_chunks SET seq = 2 WHERE session_id = ? AND seq = 9", [alice]);
  await store.close();
  assert.equal(occurrences(sqliteFiles(path), SECRET), 0, "no chunk of alice's in the file or WAL");
  assert.ok(occurrences(sqliteFiles(path), "bob plain chunk") > 0, "an owner without a key is in clear");
  const copy = join(dir, "streams-copy.db");
  copyFileSync(path, copy);
  const reopened = new SqliteStore(path, { keyring });
  await SessionManager.create(reopened).eraseOwner("alice");
  await reopened.close();
  const stolen = new SqliteStore(copy, { keyring });
  await assert.rejects(stolen.streams.read(alice, "s1", -1, 10), { code: "DECRYPT_FAILED" });
  await stolen.close();
  const keyless = new SqliteStore(copy);
  await assert.rejects(keyless.streams.read(alice, "s1", -1, 10), { code: "DECRYPT_FAILED" });
  assert.equal((await keyless.streams.read(bob, "b1", -1, 10))?.chunks.length, 2);
  await keyless.close();
});

test("PGlite: an encrypted owner's stream chunks are sealed in every page and replay whole; without the key, DECRYPT_FAILED", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite({ extensions: { pageinspect } });
  try {
    const schema = "streams";
    const keyring = randomKeyring(["alice"]);
    const store = await PostgresStore.open(db, { schema, keyring });
    const { alice, bob } = await stream(store);
    await assertReplays(store, alice, bob);
    assert.equal(total(await markersInRelations(db, schema, SECRET)), 0, "no page holds alice's chunks");
    assert.ok(total(await markersInRelations(db, schema, "bob plain chunk")) > 0);
    const keyless = new PostgresStore(db, { schema });
    await assert.rejects(keyless.streams.read(alice, "s1", -1, 10), { code: "DECRYPT_FAILED" });
    await keyless.close();
    await SessionManager.create(store).eraseOwner("alice");
    await store.close();
  } finally {
    await db.close();
  }
});

test("PGlite: a store that found a session's stream in clear refuses its next chunks once another store gave the owner a key", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  try {
    const schema = "stream_guard";
    const plain = await PostgresStore.open(db, { schema });
    const keyed = await PostgresStore.open(db, { schema, keyring: randomKeyring(["bob"]) });
    const { id } = await SessionManager.create(plain).create("bob chat", { owner: "bob" });
    await plain.streams.start(id, "s1", 1);
    // The second append relies on what the first found (no look-up): its statement checks that bob has no key.
    assert.equal(await plain.streams.append(id, "s1", [CHUNKS[0]!], 2), true);
    assert.equal(await plain.streams.append(id, "s1", [CHUNKS[1]!], 3), true);
    await keyed
      .session(id)
      .appendMessage({ id: "k", role: "user", parts: [{ type: "text", text: "sealed" }] });
    await assert.rejects(plain.streams.append(id, "s1", [CHUNKS[2]!], 4), { code: "DECRYPT_FAILED" });
    // The keyed store seals the next chunk and replays all three.
    assert.equal(await keyed.streams.append(id, "s1", [CHUNKS[2]!], 5), true);
    assert.deepEqual((await keyed.streams.read(id, "s1", -1, 10))?.chunks, CHUNKS);
    await plain.close();
    await keyed.close();
  } finally {
    await db.close();
  }
});
