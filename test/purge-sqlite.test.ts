// store.purge() on SQLite: after every kind of delete and a purge, the deleted text is in no byte of the database,
// its write-ahead log or its shared-memory file, on both drivers, the store still open and after it closed.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { SessionManager } from "../src/manager/manager.js";
import { loadNodeSqlite } from "../src/sql/engines/sqlite/better-sqlite3.js";
import type { SqliteDriverName } from "../src/sql/engines/sqlite/open.js";
import { purgeSqlite } from "../src/sql/purge/sqlite.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { msg } from "../src/testing/contract/harness.js";
import { occurrences } from "./helpers/encryption.js";
import { MARKER, markersInFiles, sqliteFiles, total, writeAndDelete } from "./helpers/purge.js";
import { ERASED_TRACES, reachKeyring, STREAMER, streamKeyAndErase } from "./helpers/purge-reach.js";
import { testEmbedder } from "./vectors/embedder.js";

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
        // The messages', the search entries' and the facts' indexes.
        ["fts5 merge", "fts5 merge", "fts5 merge", "PRAGMA wal_checkpoint(TRUNCATE)"],
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

/** Occurrences of each erased trace in the files of the database at `path`. */
const tracesIn = (path: string) =>
  Object.fromEntries(ERASED_TRACES.map((trace) => [trace, occurrences(sqliteFiles(path), trace)]));

test("erased owners' stream chunks, key rows and SQLite's statistics (sqlite_stat4) leave the files", async () => {
  const path = join(dir, "reach.db");
  const store = new SqliteStore(path, { keyring: reachKeyring() });
  // ANALYZE as an app (or PRAGMA optimize) runs it: better-sqlite3's SQLite samples index keys into sqlite_stat4.
  await streamKeyAndErase(store, async () => store.driver.run("ANALYZE"));
  assert.ok(Object.values(tracesIn(path)).some((n) => n > 0));
  const report = await store.purge();
  assert.equal(report.complete, true, JSON.stringify(report));
  const none = Object.fromEntries(ERASED_TRACES.map((t) => [t, 0]));
  assert.deepEqual(tracesIn(path), none);
  assert.ok(
    report.steps.some((s) => s.action === "ANALYZE"),
    "statistics kept are refreshed",
  );
  await store.close();
  assert.deepEqual(tracesIn(path), none);
});

for (const { name, skip } of drivers) {
  // node:sqlite opens every file path able to load sqlite-vec (loading switched off until the purge loads it), so
  // an embedder-less store drains the vectors there as better-sqlite3 does.
  test(`an erasure and purge from a process without the embedder leave no vector in sqlite-vec's table (${name})`, {
    skip,
  }, async () => {
    const path = join(dir, `vectors-${name.replace(":", "-")}.db`);
    const embedded = new SqliteStore(path, { driver: name, embedder: testEmbedder().embed });
    const manager = SessionManager.create(embedded);
    const { id } = await manager.create("vectors", { owner: STREAMER });
    for (let i = 0; i < 5; i++) await manager.append(id, msg(`v${i}`, `car engine ${MARKER} ${i}`));
    await embedded.vectors?.idle();
    const vectors = embedded.driver.column<Uint8Array>("SELECT embedding FROM agent_message_vectors_vec");
    assert.equal(vectors.length, 5, "sqlite-vec holds the vectors");
    await embedded.close();
    const found = () =>
      vectors.filter((v) =>
        sqliteFiles(path).some((file) => existsSync(file) && readFileSync(file).includes(Buffer.from(v))),
      );
    assert.equal(found().length, 5, "the files hold the vectors' bytes");
    // As the CLI's prune and purge do: a store opened without the embedder.
    const plain = new SqliteStore(path, { driver: name });
    assert.equal(plain.driver.name, name);
    await SessionManager.create(plain).eraseOwner(STREAMER);
    // A connection that cannot load sqlite-vec (a sql tag, a node:sqlite handle opened without allowExtension)
    // says what waits.
    const unable = await purgeSqlite(plain.driver, async () => false);
    assert.equal(unable.complete, false);
    assert.match(unable.steps.find((s) => s.action === "sqlite-vec drain")?.incomplete ?? "", /^5 deleted/);
    assert.equal(found().length, 5);
    const report = await plain.purge();
    assert.equal(report.complete, true, JSON.stringify(report));
    assert.equal(found().length, 0, "no erased message's vector is left in the files");
    // Loading is off again: SQL cannot load a library through the store's connection.
    assert.throws(() => plain.driver.get("SELECT load_extension('/nonexistent/library')"), /not authorized/);
    await plain.close();
  });
}
