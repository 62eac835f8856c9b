// Search entries' keys of an owner with a key on SQLite (docs/PRIVACY.md, "Search entries"): the key column holds a
// keyed digest, the real key is sealed with the content. An entry sealed before digests (its key in clear) still
// reads and is found, and its next write replaces it with a digest-keyed row; a rotation moves the digests to the new
// key (a row written under the new key meanwhile wins); an export carries the real keys and an import seals them
// again; an owner in clear keeps his keys as they are.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { isEntryKeyDigest } from "../src/context/entry-keys.js";
import { sealEntry } from "../src/context/sealing.js";
import type { TransferRow } from "../src/contract/transfer.js";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../src/sqlite/store.js";
import type { Keyring } from "../src/store/crypto/keyring.js";
import { occurrences } from "./helpers/encryption.js";
import { sqliteFiles } from "./helpers/purge.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-entry-keys-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const fresh = () => join(dir, `entries-${files++}.db`);

const newKey = () => crypto.getRandomValues(new Uint8Array(32));
const KEY = "alice-pin-zqxentrykeyq";
const LABEL = "facts";
const ALICE = { owner: "alice" };

function aliceKeyring(key: Uint8Array, previous: Uint8Array[] = []): Keyring {
  return {
    key: (owner) => (owner === "alice" ? key : undefined),
    previousKeys: (owner) => (owner === "alice" ? previous : []),
  };
}

async function rows(path: string): Promise<{ key: string; sealed_chars: number | null; content: string }[]> {
  const Database = await loadBetterSqlite3();
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(
        "SELECT key, sealed_chars, CAST(content AS TEXT) AS content FROM agent_search_entries ORDER BY seq",
      )
      .all() as { key: string; sealed_chars: number | null; content: string }[];
  } finally {
    db.close();
  }
}

const keysOf = async (store: SqliteStore, query = "vault") =>
  (await store.entries.searchEntries(LABEL, query)).map((hit) => `${hit.key}=${hit.content}`);

test("a digest in the key column, the real key in reads, the same row for the same key", async () => {
  const path = fresh();
  const store = new SqliteStore(path, { keyring: aliceKeyring(newKey()) });
  await store.entries.setEntry(LABEL, KEY, "the vault opens", ALICE);
  await store.entries.setEntry(LABEL, KEY, "the vault opens at noon", ALICE);
  await store.entries.setEntry(LABEL, "bob-key-in-clear", "bob's vault", { owner: "bob" });
  assert.deepEqual((await keysOf(store)).sort(), [
    `${KEY}=the vault opens at noon`,
    "bob-key-in-clear=bob's vault",
  ]);
  await store.close();
  const stored = await rows(path);
  assert.equal(stored.length, 2);
  assert.ok(isEntryKeyDigest(stored[0]!.key), stored[0]!.key);
  assert.equal(stored[1]!.key, "bob-key-in-clear", "an owner in clear keeps his key as it is");
  assert.equal(occurrences(sqliteFiles(path), KEY), 0);
  assert.equal(occurrences(sqliteFiles(path), "zqxentrykeyq"), 0);
});

test("an entry sealed before digests reads, is found, and its next write replaces it", async () => {
  const path = fresh();
  const key = newKey();
  const store = new SqliteStore(path, { keyring: aliceKeyring(key) });
  await store.entries.setEntry(LABEL, KEY, "the vault opens", ALICE);
  await store.close();
  // The row as this library stored it before: the key in clear beside the content sealed bound to it.
  const Database = await loadBetterSqlite3();
  const db = new Database(path);
  db.prepare("UPDATE agent_search_entries SET key = ?, content = ?, sealed_chars = ?").run(
    KEY,
    sealEntry(key, LABEL, KEY, "the vault opens"),
    "the vault opens".length,
  );
  db.close();
  const reopened = new SqliteStore(path, { keyring: aliceKeyring(key) });
  assert.deepEqual(await keysOf(reopened), [`${KEY}=the vault opens`]);
  await reopened.entries.setEntry(LABEL, KEY, "the vault opens at dawn", ALICE);
  assert.equal(await reopened.entries.countEntries(LABEL), 1, "the old row was replaced, not kept beside");
  assert.deepEqual(await keysOf(reopened), [`${KEY}=the vault opens at dawn`]);
  await reopened.close();
  assert.ok(isEntryKeyDigest((await rows(path))[0]!.key));
});

test("a rotation moves the digests to the new key; a row written under it meanwhile wins", async () => {
  const path = fresh();
  const [oldKey, newer] = [newKey(), newKey()];
  const store = new SqliteStore(path, { keyring: aliceKeyring(oldKey) });
  await store.entries.setEntry(LABEL, KEY, "the vault opens", ALICE);
  await store.entries.setEntry(LABEL, "other", "another vault", ALICE);
  await store.close();
  const before = (await rows(path)).map((row) => row.key);
  const rotating = new SqliteStore(path, { keyring: aliceKeyring(newer, [oldKey]) });
  // Written under the new key before the rotation ran: a row of its own until the rotation.
  await rotating.entries.setEntry(LABEL, "other", "another vault, newer", ALICE);
  await rotating.rekey("alice");
  assert.deepEqual((await keysOf(rotating)).sort(), [`${KEY}=the vault opens`, "other=another vault, newer"]);
  assert.equal(await rotating.entries.countEntries(LABEL), 2);
  await rotating.entries.setEntry(LABEL, KEY, "the vault opens late", ALICE);
  assert.equal(await rotating.entries.countEntries(LABEL), 2, "a write after the rotation finds its row");
  await rotating.close();
  const after = (await rows(path)).map((row) => row.key);
  assert.ok(after.every(isEntryKeyDigest));
  assert.equal(after.filter((key) => before.includes(key)).length, 0, "no digest under the old key is left");
  const onlyNew = new SqliteStore(path, { keyring: aliceKeyring(newer) });
  assert.deepEqual((await keysOf(onlyNew)).sort(), [
    `${KEY}=the vault opens late`,
    "other=another vault, newer",
  ]);
  await onlyNew.close();
});

test("an export carries the real keys; an import seals them again under digests", async () => {
  const source = fresh();
  const key = newKey();
  const store = new SqliteStore(source, { keyring: aliceKeyring(key) });
  await store.entries.setEntry(LABEL, KEY, "the vault opens", ALICE);
  await store.entries.setEntry(LABEL, "loose", "nobody's vault");
  const exported: TransferRow[] = [];
  for await (const row of store.transfer.exportRows()) exported.push(row);
  await store.close();
  assert.deepEqual(
    exported.map((row) => row.key),
    [KEY, "loose"],
  );
  const target = fresh();
  const copy = new SqliteStore(target, { keyring: aliceKeyring(newKey()) });
  await copy.transfer.importRows(
    (async function* () {
      yield* exported;
    })(),
  );
  assert.deepEqual((await keysOf(copy)).sort(), [`${KEY}=the vault opens`, "loose=nobody's vault"]);
  await copy.close();
  assert.equal(occurrences(sqliteFiles(target), KEY), 0);
  assert.deepEqual(
    (await rows(target)).map((row) => (isEntryKeyDigest(row.key) ? "digest" : row.key)),
    ["digest", "loose"],
  );
});

test("a key names a row per owner key: another owner's write of it makes a row of its own", async () => {
  const path = fresh();
  const [aliceKey, carolKey] = [newKey(), newKey()];
  const keyring: Keyring = {
    key: (owner) => (owner === "alice" ? aliceKey : owner === "carol" ? carolKey : undefined),
  };
  const store = new SqliteStore(path, { keyring });
  await store.entries.setEntry(LABEL, KEY, "alice's vault", ALICE);
  await store.entries.setEntry(LABEL, KEY, "carol's vault", { owner: "carol" });
  await store.entries.setEntry(LABEL, KEY, "bob's vault in clear", { owner: "bob" });
  assert.deepEqual((await keysOf(store)).sort(), [
    `${KEY}=alice's vault`,
    `${KEY}=bob's vault in clear`,
    `${KEY}=carol's vault`,
  ]);
  await store.close();
  assert.deepEqual(
    (await rows(path)).map((row) => (isEntryKeyDigest(row.key) ? "digest" : row.key)),
    ["digest", "digest", KEY],
  );
});
