// Key rotation on SQLite files (docs/PRIVACY.md, "Key rotation"): an owner's messages move from the old key to the
// new one in batches; stopped halfway every message reads back (some under each key), writes seal under the new
// key, the next run resumes and finishes, and then the old key is refused. A wrong old key is refused before
// anything is written; a copy of the file taken before the rotation needs the old key.
import assert from "node:assert/strict";
import { createCipheriv } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { SessionMessage } from "../src/contract/message.js";
import { SessionManager } from "../src/manager/manager.js";
import { serializeMessage } from "../src/message/json.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { type Keyring, masterKeyring } from "../src/store/crypto/keyring.js";
import type { RekeyProgress } from "../src/store/crypto/rekey-options.js";
import { keyId, sealedStart } from "../src/store/crypto/seal.js";
import { msg } from "../src/testing/contract/harness.js";
import { occurrences, SECRET } from "./helpers/encryption.js";
import { sqliteFiles } from "./helpers/purge.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-rekey-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const newKey = () => crypto.getRandomValues(new Uint8Array(32));
const said = (i: number) => `alice says ${SECRET} number ${i}`;
const textOf = (m: SessionMessage | null | undefined) => (m?.parts[0] as { text?: string } | undefined)?.text;
// A value limit low enough that the long message is stored across continuation rows (sql/engines/sqlite/chunks.ts).
const OPTIONS = { maxValueBytes: 4096 };
const LONG = `${said(99)} ${"long ".repeat(1500)}`;

/** A keyring for alice only: `key` current, `previous` the keys a rotation moves from. */
function aliceKeyring(key: Uint8Array, previous: Uint8Array[] = []): Keyring {
  return {
    key: (owner) => (owner === "alice" ? key : undefined),
    previousKeys: (owner) => (owner === "alice" ? previous : []),
  };
}

/** Alice: two sessions of 20 messages each (one long), bob: one plain message. Answers the session ids. */
async function seed(path: string, key: Uint8Array) {
  const store = new SqliteStore(path, { ...OPTIONS, keyring: aliceKeyring(key) });
  const manager = SessionManager.create(store);
  const sessions: string[] = [];
  for (const name of ["one", "two"]) {
    const { id } = await manager.create(name, { owner: "alice" });
    for (let i = 0; i < 20; i++) {
      await manager.append(id, msg(`${name}-${i}`, i === 7 && name === "two" ? LONG : said(i)));
    }
    sessions.push(id);
  }
  const { id: bob } = await manager.create("bob", { owner: "bob" });
  await manager.append(bob, msg("b0", "bob plain words"));
  await store.close();
  return { sessions, bob };
}

/** Alice's rows sealed under `key` (their first bytes name it; a split row's first piece does). */
function rowsUnder(store: SqliteStore, key: Uint8Array): number {
  const start = sealedStart(keyId(key));
  return (
    store.driver.get<{ n: number }>(
      `SELECT count(*) AS n FROM agent_messages m WHERE
         (m.chunks = 0 AND substr(m.content, 1, ?) = ?)
         OR (m.chunks > 0 AND (SELECT substr(data, 1, ?) FROM agent_message_chunks c WHERE c.seq = m.seq AND c.idx = 0) = ?)`,
      [start.length, start, start.length, start],
    )?.n ?? 0
  );
}

async function texts(store: SqliteStore, sessionId: string): Promise<(string | undefined)[]> {
  return (await store.session(sessionId).getHistory()).map(textOf);
}

const expected = (name: string) =>
  Array.from({ length: 20 }, (_, i) => (i === 7 && name === "two" ? LONG : said(i)));

test("SQLite rekey: batches, an abort halfway leaves both keys readable, a second run resumes and finishes", async () => {
  const path = join(dir, "rotate.db");
  const [oldKey, key] = [newKey(), newKey()];
  const { sessions, bob } = await seed(path, oldKey);
  const [one, two] = sessions as [string, string];
  const before = new SqliteStore(path, { ...OPTIONS, keyring: aliceKeyring(oldKey) });
  const searchAlice = async (store: SqliteStore) =>
    (await store.searchMessages(SECRET, { owner: "alice", limit: 100 })).map((hit) => hit.id).sort();
  const found = await searchAlice(before);
  assert.equal(found.length, 40, "the blind index finds every message of the owner");
  await before.close();

  const store = new SqliteStore(path, { ...OPTIONS, keyring: aliceKeyring(key, [oldKey]) });
  const split = "SELECT count(*) AS n FROM agent_messages WHERE chunks > 0";
  assert.equal(
    store.driver.get<{ n: number }>(split)?.n,
    1,
    "the long message is split over continuation rows",
  );
  const controller = new AbortController();
  const progress: RekeyProgress[] = [];
  await assert.rejects(
    store.rekey("alice", {
      batchSize: 7,
      signal: controller.signal,
      onProgress: (p) => {
        progress.push(p);
        if (progress.length === 3) controller.abort();
      },
    }),
    { name: "AbortError" },
  );
  assert.deepEqual(
    progress.map((p) => [p.done, p.total, p.resealed]),
    [
      [7, 40, 7],
      [14, 40, 14],
      [21, 40, 21],
    ],
  );
  assert.equal(rowsUnder(store, key), 21);
  assert.equal(rowsUnder(store, oldKey), 19);
  // Halfway, search hashes its terms under both keys: rows still indexed under the old key are found too.
  assert.deepEqual(await searchAlice(store), found);
  // Halfway, every message opens, under whichever key sealed it.
  assert.deepEqual(await texts(store, one), expected("one"));
  assert.deepEqual(await texts(store, two), expected("two"));
  // Writes seal under the new key; a process still on the old key may neither write nor read the new rows.
  await store.session(one).appendMessage(msg("during", "written during the rotation"));
  assert.equal(rowsUnder(store, key), 22);
  const stale = new SqliteStore(path, { ...OPTIONS, keyring: aliceKeyring(oldKey) });
  await assert.rejects(stale.session(one).appendMessage(msg("stale", "under the old key")), {
    code: "DECRYPT_FAILED",
  });
  await assert.rejects(stale.session(one).getHistory(), { code: "DECRYPT_FAILED" });
  await stale.close();

  progress.length = 0;
  const report = await store.rekey("alice", { batchSize: 7, onProgress: (p) => progress.push(p) });
  assert.deepEqual(
    { ...report, keyId: report.keyId === keyId(key) },
    { owner: "alice", keyId: true, total: 41, resealed: 19, resumed: true },
  );
  assert.ok((progress[0]?.done ?? 0) > 21, "the second run starts where the first stopped");
  assert.equal(progress.at(-1)?.done, 41);
  assert.equal(rowsUnder(store, key), 41);
  assert.equal(rowsUnder(store, oldKey), 0);
  assert.equal(store.driver.get<{ n: number }>("SELECT count(*) AS n FROM agent_owner_rekeys")?.n, 0);
  // Every row is indexed under the new key now: the same search, hashed under it alone, finds what it found before.
  assert.deepEqual(await searchAlice(store), found);
  await store.purge();
  await store.close();

  // The old key opens nothing and seals nothing now; the new key alone reads everything.
  const old = new SqliteStore(path, { ...OPTIONS, keyring: aliceKeyring(oldKey) });
  await assert.rejects(old.session(two).getHistory(), { code: "DECRYPT_FAILED" });
  await assert.rejects(old.session(two).appendMessage(msg("x", "old key again")), { code: "DECRYPT_FAILED" });
  // Her session names were re-sealed too: the old key reads them as sealed, the new one opens them.
  assert.deepEqual(
    [(await old.registry.get(two))?.name, (await old.registry.get(two))?.nameSealed],
    ["", true],
  );
  await old.close();
  const fresh = new SqliteStore(path, { ...OPTIONS, keyring: aliceKeyring(key) });
  assert.deepEqual((await texts(fresh, one)).slice(0, 20), expected("one"));
  assert.equal((await texts(fresh, one))[20], "written during the rotation");
  assert.deepEqual(await texts(fresh, two), expected("two"));
  assert.deepEqual((await fresh.registry.list({ owner: "alice" })).map((s) => s.name).sort(), ["one", "two"]);
  assert.equal(textOf((await fresh.session(bob).getHistory())[0]), "bob plain words");
  // A finished rotation run again has nothing to do.
  assert.equal((await fresh.rekey("alice")).resealed, 0);
  await fresh.close();
  assert.equal(occurrences(sqliteFiles(path), SECRET), 0, "no plaintext in the files");
  // Purged: no row sealed under the old key is left in the database file or its log.
  assert.equal(occurrences(sqliteFiles(path), sealedStart(keyId(oldKey))), 0);
});

test("SQLite rekey: a wrong or missing old key is DECRYPT_FAILED before anything is written; bad input is refused", async () => {
  const path = join(dir, "refused.db");
  const [oldKey, key, wrong] = [newKey(), newKey(), newKey()];
  const { sessions } = await seed(path, oldKey);
  const recorded = (store: SqliteStore) =>
    store.driver.all<{ key_check: string }>("SELECT key_check FROM agent_owner_keys").map((r) => r.key_check);
  const probe = new SqliteStore(path, OPTIONS);
  const checks = recorded(probe);
  await probe.close();

  for (const previous of [[wrong], []]) {
    const store = new SqliteStore(path, { ...OPTIONS, keyring: aliceKeyring(key, previous) });
    await assert.rejects(store.rekey("alice"), { code: "DECRYPT_FAILED" });
    assert.deepEqual(recorded(store), checks, "the recorded key is unchanged");
    assert.equal(store.driver.get<{ n: number }>("SELECT count(*) AS n FROM agent_owner_rekeys")?.n, 0);
    assert.equal(rowsUnder(store, oldKey), 40);
    await store.close();
  }

  const store = new SqliteStore(path, { ...OPTIONS, keyring: aliceKeyring(key, [oldKey]) });
  await assert.rejects(store.rekey("bob"), { code: "INVALID_ARGUMENT" }, "the keyring has no key for bob");
  await assert.rejects(store.rekey(""), { code: "INVALID_ARGUMENT" });
  await assert.rejects(store.rekey("alice", { batchSize: 0 }), {
    code: "INVALID_ARGUMENT",
    issues: [{ path: "batchSize", rule: "range" }],
  });
  await assert.rejects(store.rekey("alice", { onProgress: 3 as never }), { code: "INVALID_ARGUMENT" });
  const stop = new AbortController();
  // Stopped after its first batch: the rotation to `key` is under way.
  await assert.rejects(
    store.rekey("alice", { batchSize: 5, signal: stop.signal, onProgress: () => stop.abort() }),
    { name: "AbortError" },
  );
  await store.close();

  // Resuming without the key it moves from, or towards a third key, is refused and changes nothing.
  for (const [keyring, code] of [
    [aliceKeyring(key, [wrong]), "DECRYPT_FAILED"],
    [aliceKeyring(wrong, [key]), "CONFLICT"],
    [aliceKeyring(wrong, [oldKey]), "DECRYPT_FAILED"],
  ] as const) {
    const other = new SqliteStore(path, { ...OPTIONS, keyring });
    await assert.rejects(other.rekey("alice"), { code });
    assert.equal(rowsUnder(other, key), 5);
    await other.close();
  }
  const plain = new SqliteStore(path, OPTIONS);
  await assert.rejects(plain.rekey("alice"), { code: "INVALID_ARGUMENT" }, "no keyring");
  await plain.close();
  const noKeys = new SqliteStore(path, { ...OPTIONS, keyring: { key: () => newKey() } });
  await assert.rejects(noKeys.rekey("carol"), { code: "NOT_FOUND" }, "an owner with nothing encrypted");
  await noKeys.close();
  const done = new SqliteStore(path, { ...OPTIONS, keyring: aliceKeyring(key, [oldKey]) });
  assert.deepEqual(await texts(done, sessions[0]!), expected("one"));
  assert.equal((await done.rekey("alice")).resealed, 35);
  await done.close();
});

test("SQLite rekey: a copy of the file taken before the rotation opens with the old key, not the new one alone", async () => {
  const path = join(dir, "backup.db");
  const [oldKey, key] = [newKey(), newKey()];
  const { sessions } = await seed(path, oldKey);
  const copy = join(dir, "backup-copy.db");
  copyFileSync(path, copy);
  const store = new SqliteStore(path, { ...OPTIONS, keyring: aliceKeyring(key, [oldKey]) });
  await store.rekey("alice");
  await store.close();
  const withNew = new SqliteStore(copy, { ...OPTIONS, keyring: aliceKeyring(key) });
  await assert.rejects(withNew.session(sessions[0]!).getHistory(), { code: "DECRYPT_FAILED" });
  await withNew.close();
  // Destroying the old key is what makes such copies unreadable (docs/PRIVACY.md, "Key rotation").
  const withOld = new SqliteStore(copy, { ...OPTIONS, keyring: aliceKeyring(oldKey) });
  assert.deepEqual(await texts(withOld, sessions[0]!), expected("one"));
  await withOld.close();
});

test("SQLite: a write under a new key starts the rotation; rows sealed before key ids open and are re-sealed", async () => {
  const path = join(dir, "implicit.db");
  const [oldKey, key] = [newKey(), newKey()];
  const { sessions } = await seed(path, oldKey);
  const one = sessions[0]!;
  const store = new SqliteStore(path, { ...OPTIONS, keyring: aliceKeyring(key, [oldKey]) });
  // A row in the first format (no key id), as written before key rotation existed.
  const row = store.driver.get<{ seq: number; content: string }>(
    "SELECT seq, content FROM agent_messages WHERE id = 'one-3'",
  )!;
  store.driver.run("UPDATE agent_messages SET content = ? WHERE seq = ?", [
    sealV1(oldKey, one, "one-3", await store.session(one).getMessage("one-3")),
    row.seq,
  ]);
  assert.equal(textOf(await store.session(one).getMessage("one-3")), said(3));
  await store.session(one).appendMessage(msg("new", "first under the new key"));
  assert.equal(store.driver.get<{ n: number }>("SELECT count(*) AS n FROM agent_owner_rekeys")?.n, 1);
  const report = await store.rekey("alice");
  assert.equal(report.resumed, true);
  assert.equal(report.resealed, 40);
  assert.equal(rowsUnder(store, key), 41);
  assert.equal(textOf(await store.session(one).getMessage("one-3")), said(3));
  await store.close();
});

/** The first sealed format (`~sealed1:`, no key id), as seal.ts wrote it before key rotation. */
function sealV1(key: Uint8Array, sessionId: string, id: string, message: SessionMessage | null): string {
  const nonce = crypto.getRandomValues(new Uint8Array(12));
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(JSON.stringify(["agent-session/sealed1", sessionId, id])));
  const json = serializeMessage(message!);
  const body = Buffer.concat([nonce, cipher.update(json, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return `~sealed1:${body.toString("base64")}:${id}`;
}

test("SQLite rekey: a master keyring rotates to a new master key with the old one as previous", async () => {
  const path = join(dir, "master.db");
  const [oldMaster, master] = [newKey(), newKey()];
  const store = new SqliteStore(path, { keyring: masterKeyring(oldMaster) });
  const manager = SessionManager.create(store);
  const { id } = await manager.create("chat", { owner: "carol" });
  await manager.append(id, msg("c0", said(0)));
  await store.close();
  const rotating = new SqliteStore(path, { keyring: masterKeyring(master, [oldMaster]) });
  assert.equal((await rotating.rekey("carol")).resealed, 1);
  await rotating.close();
  const reopened = new SqliteStore(path, { keyring: masterKeyring(master) });
  assert.equal(textOf(await reopened.session(id).getMessage("c0")), said(0));
  await reopened.close();
});
