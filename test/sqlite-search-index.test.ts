import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { INDEX_BATCH, indexedSeq } from "../src/sql/search/sqlite-indexing.js";
import { readSearchState } from "../src/sql/search/sqlite-state.js";
import { IDLE_INDEX_MIN, WRITES_PER_PASS } from "../src/sqlite/idle-work.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { ids, msg } from "../src/testing/contract/harness.js";

const Database = loadBetterSqlite3();
const dir = mkdtempSync(join(tmpdir(), "agent-session-index-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
let counter = 0;
const file = () => join(dir, `index-${++counter}.db`);

const maxSeq = (store: SqliteStore) =>
  store.driver.get<{ seq: number }>("SELECT IFNULL(MAX(seq), 0) AS seq FROM agent_messages")!.seq;

test("appends are indexed in batches; a search first indexes what is pending", async () => {
  const store = new SqliteStore(":memory:");
  const s = store.session("a");
  for (let i = 0; i < 5; i++) await s.appendMessage(msg(`m${i}`, `pending walrus ${i}`));
  assert.equal(indexedSeq(store.driver), 0, "nothing indexed on append");
  assert.equal((await store.searchMessages("walrus", { limit: 50 })).length, 5);
  assert.equal(indexedSeq(store.driver), maxSeq(store), "the search indexed the pending rows");
  for (let i = 5; i < 5 + INDEX_BATCH; i++) await s.appendMessage(msg(`m${i}`, `batched walrus ${i}`));
  assert.equal(
    indexedSeq(store.driver),
    maxSeq(store),
    "a full batch is indexed by the append that fills it",
  );
  assert.equal((await store.searchMessages("walrus", { limit: 500 })).length, 5 + INDEX_BATCH);
  await store.close();
});

const idle = () => new Promise((resolve) => setTimeout(resolve, 20));

test("once the caller yields, a pending batch of IDLE_INDEX_MIN rows is indexed off the append path", async () => {
  const store = new SqliteStore(file());
  const s = store.session("a");
  for (let i = 0; i < IDLE_INDEX_MIN - 1; i++) await s.appendMessage(msg(`m${i}`, `idle tapir ${i}`));
  await idle();
  assert.equal(indexedSeq(store.driver), 0, "fewer rows wait for a fuller batch");
  // A pass runs every WRITES_PER_PASS writes, so the batch is indexed within that many more appends.
  for (let i = 0; i < WRITES_PER_PASS; i++) await s.appendMessage(msg(`n${i}`, `idle tapir n${i}`));
  await idle();
  assert.equal(indexedSeq(store.driver), maxSeq(store), "the idle pass indexed the batch");
  const found = await store.searchMessages("tapir", { limit: 100 });
  assert.equal(found.length, IDLE_INDEX_MIN - 1 + WRITES_PER_PASS);
  await store.close();
});

test("updates and deletes of pending and indexed messages keep the index exact", async () => {
  const store = new SqliteStore(":memory:");
  const s = store.session("a");
  await s.appendMessage(msg("old", "indexed narwhal"));
  await store.searchMessages("anything");
  await s.appendMessage(msg("new", "pending narwhal"));
  await s.updateMessage(msg("old", "indexed dugong"));
  await s.updateMessage(msg("new", "pending manatee"));
  assert.deepEqual(await store.searchMessages("narwhal"), []);
  assert.deepEqual(ids(await store.searchMessages("dugong")), ["old"]);
  assert.deepEqual(ids(await store.searchMessages("manatee")), ["new"]);
  await s.appendMessage(msg("gone", "pending okapi"));
  await s.deleteMessages(["gone", "old"]);
  assert.deepEqual(await store.searchMessages("okapi"), []);
  assert.deepEqual(await store.searchMessages("dugong"), []);
  await store.close();
});

test("a seq freed by deleting the newest messages and reused is indexed at once", async () => {
  const store = new SqliteStore(":memory:");
  const s = store.session("a");
  for (let i = 0; i < 4; i++) await s.appendMessage(msg(`m${i}`, `first ibex ${i}`));
  await store.searchMessages("ibex");
  const watermark = indexedSeq(store.driver);
  await s.deleteMessages(["m2", "m3"]);
  await s.appendMessage(msg("again", "second gazelle"));
  assert.ok(maxSeq(store) <= watermark, "SQLite reused a seq under the watermark");
  assert.deepEqual(ids(await store.searchMessages("gazelle")), ["again"]);
  assert.deepEqual(ids(await store.searchMessages("ibex")).sort(), ["m0", "m1"]);
  await store.close();
});

test("another connection's pending rows are found, indexed once; closing leaves nothing pending", async () => {
  const path = file();
  const writer = new SqliteStore(path);
  const reader = new SqliteStore(path);
  for (let i = 0; i < 10; i++) await writer.session("w").appendMessage(msg(`w${i}`, `shared tapir ${i}`));
  assert.equal((await reader.searchMessages("tapir", { limit: 50 })).length, 10);
  for (let i = 10; i < 20; i++) await writer.session("w").appendMessage(msg(`w${i}`, `shared tapir ${i}`));
  assert.equal((await writer.searchMessages("tapir", { limit: 50 })).length, 20, "each row indexed once");
  await writer.session("w").appendMessage(msg("last", "closing tapir"));
  await writer.close();
  await writer.close();
  assert.equal(
    indexedSeq(reader.driver),
    maxSeq(reader),
    "close indexed the pending row (closing twice is fine)",
  );
  await reader.close();
});

test("a read-only connection that cannot index still finds pending messages", async () => {
  const path = file();
  const writer = new SqliteStore(path);
  await writer.session("a").appendMessage(msg("i1", "indexed quokka"));
  await writer.searchMessages("quokka");
  await writer.session("a").appendMessage(msg("p1", "pending quokka"));
  await writer.session("b").appendMessage(msg("p2", "pending quokka elsewhere"));
  const handle = new Database(path, { readonly: true });
  const reader = new SqliteStore(handle);
  const all = { match: "all" } as const;
  assert.deepEqual(
    ids(await reader.searchMessages("quokka", all)),
    ["p2", "p1", "i1"],
    "pending first, newest first",
  );
  assert.deepEqual(ids(await reader.searchMessages("quokka", { sessionId: "a", ...all })), ["p1", "i1"]);
  // Ranked recall finds them too (ranked by relevance, pending or not).
  assert.deepEqual(ids(await reader.searchMessages("quokka")).sort(), ["i1", "p1", "p2"]);
  assert.deepEqual(ids(await reader.searchMessages("quokka", { sessionId: "a" })).sort(), ["i1", "p1"]);
  // A pending row that matches more of the words ranks above an indexed one that matches fewer.
  const both = ids(await reader.searchMessages("pending quokka"));
  assert.deepEqual([both.slice(0, 2).sort(), both[2]], [["p1", "p2"], "i1"]);
  assert.deepEqual(await reader.searchMessages("quokka zebra", all), []);
  await reader.close();
  handle.close();
  assert.equal((await writer.searchMessages("quokka")).length, 3);
  await writer.close();
});

test("upgrading a store written before batched indexing does not index its messages twice", async () => {
  const path = file();
  const before = new SqliteStore(path);
  for (let i = 0; i < 3; i++) await before.session("a").appendMessage(msg(`m${i}`, `legacy lemur ${i}`));
  await before.close();
  // Make it look like a version-3 file, whose messages were all indexed on append.
  const raw = new Database(path);
  raw.exec(`DROP TABLE agent_search_state; DROP TABLE agent_message_chunks;
    ALTER TABLE agent_messages DROP COLUMN chunks; ALTER TABLE agent_messages DROP COLUMN content_hash;
    UPDATE agent_session_schema SET version = 3`);
  raw.close();
  const after = new SqliteStore(path);
  assert.equal(indexedSeq(after.driver), maxSeq(after));
  assert.equal((await after.searchMessages("lemur", { limit: 50 })).length, 3);
  await after.close();
});

test("a scoped search finds the same hits, in the same order, whether it filters by token or by lookup", async () => {
  const store = new SqliteStore(":memory:");
  const words = ["otter", "otter otter", "otter beaver", "beaver", "otters swim"];
  for (let i = 0; i < 20; i++) await store.session("big").appendMessage(msg(`b${i}`, `${words[i % 5]} ${i}`));
  for (let i = 0; i < 5; i++) await store.session("small").appendMessage(msg(`s${i}`, `${words[i]} small`));
  // "big" holds 20 of 25 rows (the lookup filter), "small" 5 (the session token).
  const scope = (id: string) => readSearchState(store.driver, id)?.scope?.filter;
  assert.deepEqual([scope("big"), scope("small")], ["lookup", "token"]);
  // The all-words search keeps one order however it is scoped; ranked recall finds the same set.
  const all = { match: "all" } as const;
  const everywhere = await store.searchMessages("otter", { limit: 100, ...all });
  for (const sessionId of ["big", "small"]) {
    const expected = everywhere.filter((hit) => hit.sessionId === sessionId);
    assert.ok(expected.length > 0);
    assert.deepEqual(
      ids(await store.searchMessages("otter", { sessionId, limit: 100, ...all })),
      ids(expected),
    );
    assert.deepEqual(
      ids(await store.session(sessionId).searchMessages!("otter", 3, all)),
      ids(expected).slice(0, 3),
    );
    assert.deepEqual(
      ids(await store.searchMessages("otter", { sessionId, limit: 100 })).sort(),
      ids(expected).sort(),
    );
  }
  // Alone in the store, a session needs no filter.
  await store.session("small").clearMessages();
  assert.equal(scope("big"), "none");
  assert.deepEqual(
    ids(await store.searchMessages("otter", { sessionId: "big", limit: 100, ...all })),
    ids(everywhere.filter((hit) => hit.sessionId === "big")),
  );
  await store.close();
});

test("text indexed before the index was folded (unicode61 kept non-Latin marks) is still found as typed", async () => {
  const store = new SqliteStore(":memory:");
  const s = store.session("a");
  await s.appendMessage(msg("old", "Αθήνα ёжик"));
  await store.searchMessages("flush");
  const row = store.driver.get<{ seq: number; num: number }>(
    "SELECT seq, session_num AS num FROM agent_messages WHERE id = 'old'",
  )!;
  // The row as an earlier version indexed it: the text as written, folded by unicode61 alone.
  store.driver.run("DELETE FROM agent_messages_fts WHERE rowid = ?", [row.seq]);
  store.driver.run("INSERT INTO agent_messages_fts (rowid, text, sid) VALUES (?, ?, ?)", [
    row.seq,
    "Αθήνα ёжик",
    `s${row.num}`,
  ]);
  await s.appendMessage(msg("new", "Αθήνα ёжик"));
  assert.deepEqual(ids(await store.searchMessages("Αθήνα")).sort(), ["new", "old"]);
  assert.deepEqual(ids(await store.searchMessages('"αθήνα ёжик"')).sort(), ["new", "old"]);
  assert.deepEqual(ids(await store.searchMessages("ежик")), ["new"], "the old row keeps its old terms");
  await store.close();
});
