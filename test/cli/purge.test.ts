// `agent-session purge`: the store's purge from the command line, its steps printed or as JSON.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { SqliteStore } from "../../src/sqlite/store.js";
import { markersInFiles, sqliteFiles, total, writeAndDelete } from "../helpers/purge.js";
import { parseJson, runCli, tempDir } from "./helpers.js";

const tmp = tempDir();
after(() => tmp.remove());

test("purge takes deleted text out of a SQLite file and reports its steps", async () => {
  const db = tmp.path("purge.db");
  const store = new SqliteStore(db);
  await writeAndDelete(store);
  // Closed without a purge: the deleted search terms stay in the file until a purge merges the index.
  await store.close();
  assert.ok(total(markersInFiles(sqliteFiles(db))) > 0);
  const report = parseJson<{ complete: boolean; steps: { action: string }[] }>(
    await runCli(["purge", "--json", "--db", db]),
  );
  assert.equal(report.complete, true);
  assert.ok(report.steps.some((s) => s.action === "PRAGMA wal_checkpoint(TRUNCATE)"));
  assert.equal(total(markersInFiles(sqliteFiles(db))), 0);
  const text = await runCli(["purge", "--db", db]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^Purged in [\d.]+ ms/m);
});

test("purge refuses a bad --mode and --lock-timeout, and a missing file", async () => {
  const bad = await runCli(["purge", "--mode", "full", "--db", tmp.path("x.db")]);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--mode must be rewrite or vacuum/);
  const timeout = await runCli(["purge", "--lock-timeout", "soon", "--db", tmp.path("x.db")]);
  assert.match(timeout.stderr, /--lock-timeout must be a whole number/);
  const missing = await runCli(["purge", "--db", tmp.path("missing.db")]);
  assert.notEqual(missing.code, 0);
});
