// `agent-session adopt` on a SQLite file the real reference package wrote.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { loadBetterSqlite3 } from "../../src/sqlite/better-sqlite3.js";
import { parseJson, runCli, tempDir } from "../cli/helpers.js";
import { writeReferenceSqlite } from "../fixtures/reference-data.js";
import { sqlTagAgent } from "../helpers/sql-tag.js";

const tmp = tempDir("agent-session-adopt-cli-");
after(() => tmp.remove());

test("adopt reports what it adopted, lists what it left, and drops the source only when clean", async () => {
  const path = tmp.path("reference.db");
  const agent = sqlTagAgent(path);
  const snap = await writeReferenceSqlite(agent);
  agent.db.close();

  const first = await runCli(["adopt", "--db", path]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /3 session\(s\), 10 message\(s\), 1 overlay\(s\), 2 registry row\(s\)/);
  assert.match(
    first.stdout,
    /left in place: assistant_messages .*\/compaction_bogus: the id starts with the reserved/,
  );
  assert.match(first.stdout, /left untouched/);
  // Adopted data is what the other commands see.
  const ls = parseJson<{ name: string }[]>(await runCli(["ls", "--db", path, "--json"]));
  assert.deepEqual(
    ls
      .map((s) => s.name)
      .filter(Boolean)
      .sort(),
    ["first chat", "forked chat"],
  );
  const again = parseJson<{ report: { messages: { inserted: number; skipped: number }; verified: number } }>(
    await runCli(["adopt", "--db", path, "--json"]),
  );
  assert.deepEqual(again.report.messages, { inserted: 0, skipped: 10 });
  // One row could not be adopted: --drop refuses and leaves everything in place.
  const refused = await runCli(["adopt", "--db", path, "--drop"]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /not dropped/);
  const Database = loadBetterSqlite3();
  const db = new Database(path);
  assert.equal((db.prepare("SELECT COUNT(*) AS n FROM assistant_messages").get() as { n: number }).n, 11);
  db.close();
  assert.ok(snap.chatId);

  const missing = await runCli(["adopt", "--db", tmp.path("nothing.db")]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no database/);
});
