// The keyed blind index on SQLite files: an encrypted owner's messages are found by their words (families,
// phrases, forms, CJK) in the same ranked order as the same data in clear, with no plaintext term in the files;
// another owner's key matches nothing of theirs; erasure and purge leave none of their tokens; a wrong key is
// DECRYPT_FAILED.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { SearchHit } from "../src/contract/search.js";
import { blindTokensOf } from "../src/search/blind-tokens.js";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../src/sqlite/store.js";
import type { Keyring } from "../src/store/crypto/keyring.js";
import { msg } from "../src/testing/contract/harness.js";
import { answers, SCOPES, seedTexts as seed } from "./helpers/blind-search.js";
import { occurrences, randomKeyring, SECRET } from "./helpers/encryption.js";
import { purgeUntilComplete, sqliteFiles } from "./helpers/purge.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-blind-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("SQLite: an encrypted owner is found by its words, ranked as the same data in clear", async () => {
  const clear = new SqliteStore(join(dir, "clear.db"));
  const sealedPath = join(dir, "sealed.db");
  const sealed = new SqliteStore(sealedPath, { keyring: randomKeyring(["alice", "carol"]) });
  const clearIds = (await seed(clear)).ids;
  const sealedIds = (await seed(sealed)).ids;
  // Ranked recall weighs a term by its matches in the search's scope: the same with two owners in the store.
  for (const scope of SCOPES) {
    // Session ids differ between the stores; message ids and scores do not.
    assert.deepEqual(
      await answers(sealed, scope, sealedIds, "any"),
      await answers(clear, scope, clearIds, "any"),
    );
  }
  // The queries do find things (the comparison is not of two empty lists).
  assert.equal((await sealed.searchMessages(SECRET, { owner: "alice" })).length, 2);
  assert.equal((await sealed.searchMessages("deploy", { sessionId: sealedIds[0]! })).length, 3);
  const [hit] = await sealed.searchMessages("rotates", { owner: "alice" });
  assert.equal(hit?.id, "alice6");
  assert.match(JSON.stringify(hit), /rotates every week/, "hits are read from the opened content");
  // A store-wide search hashes for no owner: it finds text in clear only.
  assert.equal((await sealed.searchMessages(SECRET)).length, 0);
  // A time asked lifts its turns as in clear: "tomorrow" said on 4 May is the 5 May asked.
  const [deploy] = await sealed.searchMessages("deploy on 5 May 2023", { sessionId: sealedIds[0]! });
  assert.equal(deploy?.id, "alice3");
  await clear.close();
  await sealed.close();
  for (const word of [SECRET, "deployment", "apples", "rotates", "机器", "xdtd20230505"])
    assert.equal(occurrences(sqliteFiles(sealedPath), word), 0, `no "${word}" in the files`);
});

test("SQLite: every word required ranks an encrypted owner alone in its store as in clear", async () => {
  // FTS5's bm25 counts a term's documents store-wide, and an owner's tokens are its own: the same figures where
  // the owner is alone (docs/PRIVACY.md).
  const clear = new SqliteStore(join(dir, "clear-all.db"));
  const sealed = new SqliteStore(join(dir, "sealed-all.db"), { keyring: randomKeyring(["alice"]) });
  const clearIds = (await seed(clear, ["alice"])).ids;
  const sealedIds = (await seed(sealed, ["alice"])).ids;
  for (const scope of [(ids: string[]) => ({ sessionId: ids[0]! }), () => ({ owner: "alice" })]) {
    const expected = await answers(clear, scope, clearIds, "all");
    assert.deepEqual(await answers(sealed, scope, sealedIds, "all"), expected);
    assert.ok(expected.some((answer) => (answer as unknown[][])[1]!.length > 0));
  }
  await clear.close();
  await sealed.close();
});

test("SQLite: another owner's key matches nothing of an encrypted owner's", async () => {
  const keyring = randomKeyring(["alice", "carol"]);
  const store = new SqliteStore(join(dir, "owners.db"), { keyring });
  const { ids } = await seed(store);
  const owners = (hits: SearchHit[]) => new Set(hits.map((h) => h.id.replace(/\d+$/, "")));
  assert.deepEqual(owners(await store.searchMessages("apple", { owner: "carol" })), new Set(["carol"]));
  assert.deepEqual(owners(await store.searchMessages("apple", { sessionId: ids[0]! })), new Set(["alice"]));
  // Each owner's words hash differently: carol's tokens of a word are not alice's.
  const alice = blindTokensOf(keyring.keys.get("alice")!);
  const carol = blindTokensOf(keyring.keys.get("carol")!);
  assert.notEqual(alice.word(SECRET), carol.word(SECRET));
  assert.notEqual(alice.prefix("deploy"), carol.prefix("deploy"));
  // Alice's token of the secret, looked up as a word in carol's scope, finds nothing.
  assert.equal((await store.searchMessages(alice.word(SECRET), { owner: "carol" })).length, 0);
  await store.close();
});

test("SQLite: erasing and purging an owner leaves none of its blind tokens in the files", async () => {
  const path = join(dir, "erase.db");
  const keyring = randomKeyring(["alice", "carol"]);
  const store = new SqliteStore(path, { keyring });
  const { manager } = await seed(store);
  assert.equal((await store.searchMessages(SECRET, { owner: "alice" })).length, 2, "indexed");
  // The index keeps a term's leading characters shared with the term before it: its last ones are its own.
  const token = blindTokensOf(keyring.keys.get("alice")!).word(SECRET).slice(-10);
  store.driver.run("PRAGMA wal_checkpoint(TRUNCATE)");
  assert.ok(occurrences(sqliteFiles(path), token) > 0, "the token is in the index");
  await manager.eraseOwner("alice");
  await purgeUntilComplete(() => store.purge());
  await store.close();
  assert.equal(occurrences(sqliteFiles(path), token), 0);
});

test("SQLite: a search of an encrypted owner with a wrong or missing key is DECRYPT_FAILED", async () => {
  const path = join(dir, "wrong.db");
  const store = new SqliteStore(path, { keyring: randomKeyring(["alice", "carol"]) });
  const { ids } = await seed(store);
  await store.close();
  const keyrings: Keyring[] = [randomKeyring(["alice", "carol"]), randomKeyring([])];
  for (const keyring of keyrings) {
    const other = new SqliteStore(path, { keyring });
    await assert.rejects(other.searchMessages("apple", { owner: "alice" }), { code: "DECRYPT_FAILED" });
    await assert.rejects(other.searchMessages("apple", { sessionId: ids[0]! }), { code: "DECRYPT_FAILED" });
    await assert.rejects(other.searchMessages("apple", { sessionIds: ids, match: "all" }), {
      code: "DECRYPT_FAILED",
    });
    await other.close();
  }
});

test("SQLite: an edited encrypted message is found by its new words; a read-only reader finds pending ones", async () => {
  const path = join(dir, "edit.db");
  const keyring = randomKeyring(["alice", "carol"]);
  const store = new SqliteStore(path, { keyring });
  const { ids } = await seed(store);
  assert.equal((await store.searchMessages("rotates", { owner: "alice" })).length, 1, "indexed");
  await store.session(ids[0]!).updateMessage(msg("alice6", "The wombat sleeps all afternoon"));
  assert.deepEqual(
    (await store.searchMessages("wombat", { owner: "alice" })).map((h) => h.id),
    ["alice6"],
  );
  assert.equal((await store.searchMessages("rotates", { owner: "alice" })).length, 0);
  // Appended after the last search: pending, matched in memory by a connection that cannot index it.
  await store.session(ids[0]!).appendMessage(msg("alice8", "a pending wombat appears"));
  const Database = await loadBetterSqlite3();
  const handle = new Database(path, { readonly: true });
  const reader = new SqliteStore(handle, { keyring });
  for (const match of ["any", "all"] as const) {
    const found = await reader.searchMessages("wombat", { sessionId: ids[0]!, match });
    assert.deepEqual(found.map((h) => h.id).sort(), ["alice6", "alice8"]);
    assert.deepEqual((await reader.searchMessages("wombat", { match })).length, 0, "store-wide: clear only");
  }
  await reader.close();
  handle.close();
  await store.close();
  assert.equal(occurrences(sqliteFiles(path), "wombat"), 0);
});

test("SQLite: a pending encrypted message rewritten before its batch is indexed with its new words", async () => {
  // The writer keeps the words of its pending sealed rows for their batch (search/written-texts.ts); a row changed
  // since (here by an update, which leaves a pending row to its batch) must be opened instead.
  const path = join(dir, "rewritten.db");
  const keyring = randomKeyring(["alice", "carol"]);
  const writer = new SqliteStore(path, { keyring });
  const { ids } = await seed(writer);
  assert.equal((await writer.searchMessages("rotates", { owner: "alice" })).length, 1, "indexed");
  await writer.session(ids[0]!).appendMessage(msg("alice8", "a pending wombat appears"));
  await writer.session(ids[0]!).appendMessage(msg("alice9", "the wombat stays as written"));
  await writer.session(ids[0]!).updateMessage(msg("alice8", "the capybara swims instead"));
  const found = async (query: string) =>
    (await writer.searchMessages(query, { owner: "alice" })).map((h) => h.id).sort();
  assert.deepEqual(await found("capybara"), ["alice8"]);
  assert.deepEqual(await found("wombat"), ["alice9"]);
  await writer.close();
});

test("blind tokens: a word's token starts with the token prefix of each of its prefixes, and only of those", () => {
  const blind = blindTokensOf(crypto.getRandomValues(new Uint8Array(32)));
  const words = [
    "deploy",
    "deployment",
    "deployed",
    "dep",
    "de",
    "creation",
    "create",
    "机器",
    "机",
    "ab",
    "x".repeat(40),
  ];
  for (const word of words) {
    for (const other of words) {
      const prefix = blind.prefix(other);
      if (prefix === null) continue;
      assert.equal(blind.word(word).startsWith(prefix), word.startsWith(other), `${word} / ${other}*`);
    }
    assert.equal(words.filter((w) => blind.word(w) === blind.word(word)).length, 1);
  }
  // Shorter than a first segment: only the word itself (see PREFIX_START); longer than the cap: its first 32.
  assert.equal(blind.prefix("de"), null);
  assert.equal(blind.prefix("x".repeat(40)), blind.prefix("x".repeat(33)));
});

test("SQLite: a query word spelled like a blind token matches nothing", async () => {
  const store = new SqliteStore(join(dir, "mark.db"), { keyring: randomKeyring(["alice"]) });
  await seed(store, ["alice"]);
  const token = blindTokensOf(randomKeyring(["x"]).keys.get("x")!).prefix("apple")!;
  for (const match of ["any", "all"] as const)
    assert.deepEqual(await store.searchMessages(token, { owner: "alice", match }), []);
  assert.deepEqual(await store.searchMessages(`${token} apples`, { owner: "alice", match: "all" }), []);
  assert.equal((await store.searchMessages("apples", { owner: "alice", match: "all" })).length, 2);
  assert.equal((await store.searchMessages("\uE000", { owner: "alice" })).length, 0);
  await store.close();
});
