// Owner search on SQLite keeps to the owner inside the FTS5 index (the owner's token beside the session's, issue
// #59): a search never reads the owner's session ids, however many sessions the owner has, and a store indexed
// before owner tokens takes them in its schema step.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { ownerToken } from "../src/sql/search/sqlite-owner-index.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { ids, msg } from "../src/testing/contract/harness.js";

const Database = loadBetterSqlite3();
const dir = mkdtempSync(join(tmpdir(), "agent-session-owner-search-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

test("an owner's search reads none of the owner's session ids: one token inside the index", async () => {
  const log: string[] = [];
  const db = new Database(":memory:", { verbose: (sql: unknown) => log.push(String(sql)) });
  const store = new SqliteStore(db);
  const sessions = 1500;
  for (let i = 0; i < sessions; i++) {
    await store.registry.create({ id: `alice-${i}`, name: `s${i}`, owner: "alice" });
  }
  await store.session("alice-0").appendMessage(msg("oldest", "the quarterly report"));
  await store.session(`alice-${sessions - 1}`).appendMessage(msg("newest", "another quarterly report"));
  await store.registry.create({ id: "bob-0", name: "b", owner: "bob" });
  await store.session("bob-0").appendMessage(msg("bob", "bob's quarterly report"));
  await store.searchMessages("warm the index up");
  for (const match of ["any", "all"] as const) {
    log.length = 0;
    const hits = await store.searchMessages("quarterly report", { owner: "alice", match });
    assert.deepEqual(ids(hits).sort(), ["newest", "oldest"], match);
    const read = log.join("\n");
    // better-sqlite3 logs a long bound string cut short: the token's first characters are what it shows.
    assert.ok(
      read.includes(ownerToken("alice").slice(0, 20)),
      `the owner's token is in the match (${match})`,
    );
    // A session id that holds no hit is never read; the registry's owner index is never ranged over.
    assert.ok(!read.includes("alice-700"), `no owned session id is read (${match})`);
    assert.ok(!/WHERE owner = /.test(read), `no list of the owner's sessions (${match}): ${read}`);
    assert.ok(log.length < 20, `${log.length} statements`);
  }
  await store.close();
  db.close();
});

test("a store indexed before owner tokens takes them when opened, and the owner's search finds its rows", async () => {
  const file = join(dir, "old.db");
  const store = new SqliteStore(file);
  await store.registry.create({ id: "a", name: "a", owner: "alice" });
  await store.registry.create({ id: "b", name: "b", owner: "bob" });
  await store.session("a").appendMessage(msg("a1", "the harvest festival"));
  await store.session("b").appendMessage(msg("b1", "the harvest moon"));
  await store.session("c").appendMessage(msg("c1", "harvest time, nobody's"));
  assert.deepEqual(ids(await store.searchMessages("harvest", { owner: "alice" })), ["a1"]);
  await store.close();

  // Make the file what the release before owner tokens left: session tokens alone, schema version 16.
  const db = new Database(file);
  const rows = db.prepare("SELECT m.seq, m.session_num, m.content FROM agent_messages m").all() as {
    seq: number;
    session_num: number;
    content: string;
  }[];
  for (const row of rows) {
    const text = (JSON.parse(row.content) as { parts: { text: string }[] }).parts[0]!.text;
    db.prepare("DELETE FROM agent_messages_fts WHERE rowid = ?").run(row.seq);
    db.prepare("INSERT INTO agent_messages_fts (rowid, text, sid) VALUES (?, ?, ?)").run(
      row.seq,
      text,
      `s${row.session_num}`,
    );
  }
  db.prepare("UPDATE agent_session_schema SET version = 16").run();
  db.close();

  const reopened = new SqliteStore(file);
  assert.deepEqual(ids(await reopened.searchMessages("harvest", { owner: "alice" })), ["a1"]);
  assert.deepEqual(ids(await reopened.searchMessages("harvest", { owner: "bob", match: "all" })), ["b1"]);
  assert.equal((await reopened.searchMessages("harvest")).length, 3, "unscoped search is as before");
  const counts = reopened.driver.get<{ n: number }>("SELECT count(*) AS n FROM agent_messages_fts")!;
  assert.equal(counts.n, 3, "each message is in the index once");
  await reopened.close();
});
