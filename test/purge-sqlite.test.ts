// store.purge() on SQLite: after every kind of delete and a purge, the deleted text is in no byte of the database,
// its write-ahead log or its shared-memory file, on both drivers, the store still open and after it closed.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { loadNodeSqlite } from "../src/sqlite/connection/better-sqlite3.js";
import type { SqliteDriverName } from "../src/sqlite/connection/open.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { markersInFiles, sqliteFiles, total, writeAndDelete } from "./helpers/purge.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-purge-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const drivers: { name: SqliteDriverName; skip: string | false }[] = [
  { name: "better-sqlite3", skip: false },
  {
    name: "node:sqlite",
    skip: loadNodeSqlite() ? false : `node:sqlite needs Node >= 22.13 (${process.version})`,
  },
];

for (const { name, skip } of drivers) {
  describe(`SQLite purge (${name})`, { skip }, () => {
    test("deleted text is in no byte of the files after purge(), open and closed", async () => {
      const path = join(dir, `${name.replace(":", "-")}.db`);
      const store = new SqliteStore(path, { driver: name });
      await writeAndDelete(store);
      assert.ok(
        total(markersInFiles(sqliteFiles(path))) > 0,
        "the deletes alone leave the text in the files",
      );
      const report = await store.purge();
      assert.equal(report.backend, "sqlite");
      assert.equal(report.complete, true, JSON.stringify(report));
      assert.deepEqual(
        report.steps.map((s) => s.action),
        ["fts5 merge", "fts5 merge", "PRAGMA wal_checkpoint(TRUNCATE)"],
      );
      assert.equal(
        total(markersInFiles(sqliteFiles(path))),
        0,
        JSON.stringify(markersInFiles(sqliteFiles(path))),
      );
      // The kept session is whole and searchable after the merges.
      assert.equal((await store.searchMessages("kept", { limit: 1000 })).length > 0, true);
      // Idempotent: a second purge finds nothing to merge and finishes.
      assert.equal((await store.purge()).complete, true);
      await store.close();
      assert.equal(
        total(markersInFiles(sqliteFiles(path))),
        0,
        JSON.stringify(markersInFiles(sqliteFiles(path))),
      );
    });
  });
}

test("SQLite purge on :memory: runs and reports the checkpoint", async () => {
  const store = new SqliteStore(":memory:");
  await writeAndDelete(store);
  const report = await store.purge();
  assert.equal(report.complete, true, JSON.stringify(report));
  await store.close();
});

test("a connection without secure_delete gets a VACUUM in its purge", async () => {
  const path = join(dir, "insecure.db");
  const store = new SqliteStore(path);
  store.driver.run("PRAGMA secure_delete = OFF");
  await writeAndDelete(store);
  const report = await store.purge();
  assert.ok(
    report.steps.some((s) => s.action === "VACUUM"),
    JSON.stringify(report),
  );
  assert.equal(
    total(markersInFiles(sqliteFiles(path))),
    0,
    JSON.stringify(markersInFiles(sqliteFiles(path))),
  );
  await store.close();
});
