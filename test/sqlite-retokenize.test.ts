import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { hasCjk } from "../src/search/cjk.js";
import { foldToken, TOKEN } from "../src/search/tokens.js";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { CJK_GLOB, retokenizeCjk } from "../src/sql/search/sqlite-retokenize.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { ids, msg } from "../src/testing/contract/harness.js";

const Database = loadBetterSqlite3();
const dir = mkdtempSync(join(tmpdir(), "agent-session-retokenize-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

// How releases before schema step 10 indexed text: one token a run of letters, CJK runs whole.
const oldIndexText = (text: string) => (text.match(TOKEN) ?? []).map((t) => foldToken(t)).join(" ");

test("a store indexed before CJK pairs is indexed again when opened, messages and entries", async () => {
  const file = join(dir, "old.db");
  const store = new SqliteStore(file);
  const s = store.session("a");
  await s.appendMessage(msg("zh", "我喜欢吃苹果，昨天买了三个。"));
  await s.appendMessage(msg("en", "an apple a day", "assistant"));
  await store.entries.setEntry("kb", "水果", "我最喜欢的水果是香蕉");
  assert.deepEqual(ids(await store.searchMessages("苹果")), ["zh"]);
  await store.close();

  // Make the file what an older release left: the old index text and schema version 9.
  const db = new Database(file);
  db.prepare(
    "DELETE FROM agent_messages_fts WHERE rowid = (SELECT seq FROM agent_messages WHERE id = 'zh')",
  ).run();
  db.prepare(
    "INSERT INTO agent_messages_fts (rowid, text, sid) SELECT seq, ?, 's' || session_num FROM agent_messages WHERE id = 'zh'",
  ).run(oldIndexText("我喜欢吃苹果，昨天买了三个。"));
  db.prepare("DELETE FROM agent_search_entries_fts").run();
  db.prepare(
    "INSERT INTO agent_search_entries_fts (rowid, text) SELECT seq, ? FROM agent_search_entries",
  ).run(oldIndexText("水果\n我最喜欢的水果是香蕉"));
  db.prepare("UPDATE agent_session_schema SET version = 9").run();
  const found = db.prepare("SELECT count(*) AS n FROM agent_messages_fts WHERE agent_messages_fts MATCH ?");
  assert.equal(
    (found.get('"苹果"') as { n: number }).n,
    0,
    "the old index does not find a word inside a clause",
  );
  db.close();

  // A read-only connection cannot take the step: it is told so, and what to do.
  const readOnly = new Database(file, { readonly: true });
  assert.throws(() => new SqliteStore(readOnly), { code: "READONLY" });
  readOnly.close();
  const reopened = new SqliteStore(file);
  assert.deepEqual(ids(await reopened.searchMessages("苹果")), ["zh"]);
  assert.deepEqual(ids(await reopened.searchMessages('"我喜欢吃苹果"')), ["zh"]);
  assert.deepEqual(ids(await reopened.searchMessages("apple")), ["en"]);
  assert.deepEqual(
    (await reopened.entries.searchEntries("kb", "香蕉")).map((h) => h.key),
    ["水果"],
  );
  const readerHandle = new Database(file, { readonly: true });
  const reader = new SqliteStore(readerHandle);
  assert.deepEqual(ids(await reader.searchMessages("苹果")), ["zh"], "once migrated, a reader opens it");
  await reader.close();
  readerHandle.close();
  const counts = reopened.driver.get<{ n: number }>("SELECT count(*) AS n FROM agent_messages_fts")!;
  assert.equal(counts.n, 2, "each message is in the index once");
  await reopened.close();
});

test("re-indexing reads the rows a batch at a time and leaves plain text alone", async () => {
  const store = new SqliteStore(":memory:");
  const s = store.session("a");
  const clauses = ["我喜欢吃苹果", "东京的天气很好", "사과를 좋아해요", "カメラを買った", "今天去公园"];
  for (const [i, text] of clauses.entries()) {
    await s.appendMessage(msg(`c${i}`, text));
    await s.appendMessage(msg(`e${i}`, `plain english ${i}`, "assistant"));
  }
  await store.searchMessages("plain");
  store.driver.transaction(() => {
    for (const [i, text] of clauses.entries()) {
      const seq = store.driver.get<{ seq: number }>("SELECT seq FROM agent_messages WHERE id = ?", [
        `c${i}`,
      ])!.seq;
      store.driver.run("DELETE FROM agent_messages_fts WHERE rowid = ?", [seq]);
      store.driver.run("INSERT INTO agent_messages_fts (rowid, text, sid) VALUES (?, ?, 's1')", [
        seq,
        oldIndexText(text),
      ]);
    }
  });
  assert.deepEqual(ids(await store.searchMessages("天气")), []);
  assert.equal(
    store.driver.transaction(() => retokenizeCjk(store.driver, 2)),
    clauses.length,
  );
  for (const [query, id] of [
    ["苹果", "c0"],
    ["天气", "c1"],
    ["사과", "c2"],
    ["カメラ", "c3"],
    ["公园", "c4"],
  ]) {
    assert.deepEqual(ids(await store.searchMessages(query!)), [id], query);
  }
  assert.equal((await store.searchMessages("plain", { limit: 50 })).length, clauses.length);
  await store.close();
});

test("the GLOB that picks the rows to look at matches every character indexed in pairs", () => {
  const db = new Database(":memory:");
  const glob = db.prepare("SELECT ? GLOB ? AS hit");
  for (let code = 0; code <= 0x10ffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const char = String.fromCodePoint(code);
    if (!hasCjk(char)) continue;
    assert.equal((glob.get(`x${char}y`, CJK_GLOB) as { hit: number }).hit, 1, code.toString(16));
  }
  db.close();
});
