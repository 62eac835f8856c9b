// Agent sessions are ordinary store sessions: the CLI lists, shows and draws a file SQLiteSessionStorage wrote,
// tool calls and usage included.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { SQLiteSessionStorage } from "../../src/agent/index.js";
import { entry, sampleMessages, sampleState } from "../../src/testing/storage/fixtures.js";
import { runCli, tempDir } from "../cli/helpers.js";

const tmp = tempDir();
const db = tmp.path("agent-sessions.db");
const state = sampleState({ id: "chat-1", metadata: { title: "Weather chat" } });
after(() => tmp.remove());

before(async () => {
  const storage = new SQLiteSessionStorage(db);
  await storage.save(state);
  await storage.appendMessages(state.id, sampleMessages("n").slice(0, 2), {
    updatedAt: 5,
    usage: [entry(2)],
  });
  await storage.save({ ...state, id: "chat-1-fork", parentId: state.id, metadata: {} });
  await storage.close();
});

test("ls lists agent sessions with their name, fork parent and usage", async () => {
  const result = await runCli(["ls", "--db", db]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /chat-1\b.*Weather chat/);
  assert.match(result.stdout, /chat-1-fork/);
  const json = JSON.parse((await runCli(["ls", "--json", "--db", db])).stdout) as unknown;
  const text = JSON.stringify(json);
  assert.match(text, /"parentSessionId":"chat-1"/);
  assert.match(text, /"source":"agent"/);
});

test("show prints text, tool calls with input and output, and the usage totals", async () => {
  const result = await runCli(["show", "chat-1", "--db", db]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /Session chat-1 "Weather chat": branch to n2, 6 messages/);
  assert.match(
    result.stdout,
    /Usage: 250 input \(30 cache read, 15 cache write\), 45 output tokens, \$0\.2500/,
  );
  assert.match(result.stdout, /Hello ✓/);
  assert.match(result.stdout, /\[tool weather \(input-available\)\] \{"city":"Paris","days":\[1,2\]\}/);
  assert.match(result.stdout, /\[tool weather \(output-available\)\] +→ \{"t":21\.5\}/);
  assert.match(result.stdout, /\[reasoning\] thinking/);
});

test("tree draws the linear path", async () => {
  const result = await runCli(["tree", "chat-1", "--db", db]);
  assert.equal(result.code, 0, result.stderr);
  for (const id of ["m1", "m2", "m3", "m4", "n1", "n2"])
    assert.match(result.stdout, new RegExp(`\\b${id}\\b`));
});

test("search finds agent messages", async () => {
  const result = await runCli(["search", "check", "--db", db]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /chat-1/);
});

test("export and import carry an agent session whole: it loads the same from the new file", async () => {
  const file = tmp.path("agent.jsonl");
  const copy = tmp.path("copy.db");
  const exported = await runCli(["export", "-o", file, "--db", db]);
  assert.equal(exported.code, 0, exported.stderr);
  const imported = await runCli(["import", file, "--db", copy]);
  assert.equal(imported.code, 0, imported.stderr);
  const [source, target] = [new SQLiteSessionStorage(db), new SQLiteSessionStorage(copy)];
  try {
    assert.deepEqual([...(await target.list())].sort(), ["chat-1", "chat-1-fork"]);
    assert.deepEqual(await target.load("chat-1"), await source.load("chat-1"));
  } finally {
    await Promise.all([source.close(), target.close()]);
  }
});
