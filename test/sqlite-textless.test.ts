// SQLite's side of ranked recall across an agent's tool steps (the contract's recall-steps.spec.ts checks the
// ranking on every backend): which sessions are marked as holding messages without text, that a session without
// any is searched without the walk, and that a store from before the mark gains it when opened.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { SessionMessage } from "../src/contract/message.js";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { ids, msg } from "../src/testing/contract/harness.js";

const Database = loadBetterSqlite3();
const dir = mkdtempSync(join(tmpdir(), "agent-session-textless-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

const toolResult = (id: string): SessionMessage => ({
  id,
  role: "tool",
  parts: [{ type: "tool-lookup", toolCallId: id, state: "output-available", output: { rows: 3 } }],
});

const marks = (store: SqliteStore) =>
  Object.fromEntries(
    store.driver
      .tuples<[string, number]>("SELECT session_id, textless FROM agent_session_heads")
      .map(([id, m]) => [id, m]),
  );

/** Counts the statements that look up messages without text (text-parents.ts) while `body` runs. */
async function walks(store: SqliteStore, body: () => Promise<unknown>): Promise<number> {
  const driver = store.driver;
  const column = driver.column.bind(driver);
  let count = 0;
  driver.column = ((sql: string, params?: never) => {
    if (sql.includes("agent_messages_fts_docsize")) count++;
    return column(sql, params);
  }) as typeof driver.column;
  try {
    await body();
  } finally {
    driver.column = column;
  }
  return count;
}

async function seed(store: SqliteStore): Promise<void> {
  const chat = store.session("chat");
  await chat.appendMessage(msg("c1", "Which trains go to the coast?"));
  await chat.appendMessage(msg("c2", "The early one stops at the harbour", "assistant"));
  const agent = store.session("agent");
  await agent.appendMessage(msg("a1", "Which trains go to the coast?"));
  await agent.appendMessage(toolResult("a2"));
  await agent.appendMessage(msg("a3", "The early one stops at the harbour", "assistant"));
  const emoji = store.session("emoji");
  await emoji.appendMessage(msg("e1", "Which trains go to the coast?"));
  await emoji.appendMessage(msg("e2", "👍 !!!", "assistant"));
}

test("a session is marked when a message without a word is indexed; only marked sessions are walked", async () => {
  const store = new SqliteStore(":memory:");
  await seed(store);
  await store.searchMessages("coast"); // indexes what is pending
  assert.deepEqual(marks(store), { chat: 0, agent: 1, emoji: 1 });
  // Text without a word has no index row, as a tool result has none.
  const rows = store.driver.column<number>("SELECT rowid FROM agent_messages_fts ORDER BY rowid");
  assert.equal(rows.length, 5);
  const ask = (sessionId: string) => store.searchMessages("trains harbour", { sessionId });
  assert.equal(await walks(store, () => ask("chat")), 0, "a session without such messages is not walked");
  assert.equal(await walks(store, () => ask("agent")), 1);
  assert.deepEqual(ids(await ask("agent")).sort(), ["a1", "a3"]);
  // A set of sessions is walked when one of them holds such messages; a store-wide search always is.
  const among = (sessionIds: string[]) => store.searchMessages("trains harbour", { sessionIds });
  assert.equal(await walks(store, () => among(["chat"])), 0);
  assert.equal(await walks(store, () => among(["chat", "agent"])), 1);
  assert.equal(await walks(store, () => store.searchMessages("trains harbour")), 1);
  // An update that takes a message's words away marks its session.
  await store.session("chat").updateMessage(msg("c2", "…", "assistant"));
  assert.equal(marks(store).chat, 1);
  await store.close();
});

test("a store from before the mark gains it when opened, from what its index holds", async () => {
  const path = join(dir, "before.db");
  const before = new SqliteStore(path);
  await seed(before);
  await before.searchMessages("coast");
  await before.close();
  const raw = new Database(path);
  raw.exec(
    `ALTER TABLE agent_session_heads DROP COLUMN textless; UPDATE agent_session_schema SET version = 11`,
  );
  raw.close();
  const after = new SqliteStore(path);
  assert.deepEqual(marks(after), { chat: 0, agent: 1, emoji: 1 });
  const hits = ids(await after.searchMessages("trains harbour", { sessionId: "agent" }));
  assert.deepEqual(hits.sort(), ["a1", "a3"]);
  await after.close();
});
