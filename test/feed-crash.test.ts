// A writer killed right after its write returned (before anything the change feed does next) leaves no committed
// write without its change-log row: a subscriber replaying the log hears of every stored message, delete, clear
// and overlay (issue 32), of a registry delete and of a transfer import (issue 33).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { ChangeEvent, FeedCapableStore } from "../src/contract/feed.js";
import type { RegistryCapableStore } from "../src/contract/registry.js";
import { PostgresStore } from "../src/postgres/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { dropSchema, PG_URL, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";

type Store = RegistryCapableStore & FeedCapableStore;
const fixture = fileURLToPath(new URL("./fixtures/feed-killed-writer.ts", import.meta.url));

/** Runs the killed writer; resolves once it died of SIGKILL (anything else fails the test). */
function killedWriter(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", fixture, ...args], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
    });
    child.on("error", reject);
    child.on("exit", (code, signal) =>
      signal === "SIGKILL" ? resolve() : reject(new Error(`writer exited ${code} ${signal}: ${stderr}`)),
    );
  });
}

/** Every event the change log holds, replayed from the start. */
async function replayAll(store: Store): Promise<ChangeEvent[]> {
  const events: ChangeEvent[] = [];
  let last = 0;
  const stop = store.subscribe((e) => void events.push(e), { after: 0 });
  // The replay is read in pages right after subscribe(): wait until it has not grown for 300 ms (a page can take
  // longer than one short pause on a loaded machine, and stopping early would miss events the log holds).
  let quiet = 0;
  for (let i = 0; i < 500 && quiet < 15; i++) {
    last = events.length;
    await new Promise((r) => setTimeout(r, 20));
    quiet = events.length === last ? quiet + 1 : 0;
  }
  stop();
  return events;
}

function crashes(
  name: string,
  open: () => Promise<Store>,
  args: (prefix: string, write: string) => string[],
) {
  describe(`${name}: a writer killed after its write`, { concurrency: false }, () => {
    const writes = ["append", "import", "update", "upsert", "delete", "clear", "compaction"];
    for (const write of [...writes, "registry-delete", "transfer-import"]) {
      test(`${write}: every stored change is in the change log`, async () => {
        await killedWriter(args(write, write));
        const store = await open();
        // Each write has a session of its own: a clear or delete must not hide another case's messages.
        const session = store.session(write);
        const events = await replayAll(store);
        const heard = (id: string, type: string) =>
          events.some((e) => e.type === type && "message" in e && e.message.id === id);
        // A replayed append whose message is gone since (deleted, cleared) is left out: the later row says why.
        if (write !== "delete" && write !== "clear" && write !== "registry-delete")
          assert.ok(heard(`${write}-0`, "append"), "the first append was logged");
        // The kill came after the write returned: it is stored, and its change with it.
        if (write === "append" || write === "import") {
          assert.ok(await session.getMessage(`${write}-1`), "the write committed");
          assert.ok(heard(`${write}-1`, write), `${write}-1 is stored but no subscriber hears of it`);
        } else if (write === "update") {
          assert.deepEqual((await session.getMessage("update-0"))?.parts, [{ type: "text", text: "edited" }]);
          assert.ok(heard("update-0", "update"), "the update is stored but was never announced");
        } else if (write === "upsert") {
          assert.ok(await session.getMessage("upsert-new"), "the upsert committed");
          assert.ok(heard("upsert-new", "append"), "the upserted message is stored but was never announced");
        } else if (write === "delete") {
          assert.equal(await session.getMessage("delete-0"), null, "the delete committed");
          assert.ok(
            events.some((e) => e.type === "delete" && e.sessionId === write && e.ids.includes("delete-0")),
            "the delete committed but was never announced",
          );
        } else if (write === "clear") {
          assert.deepEqual(await session.getHistory(), [], "the clear committed");
          assert.ok(
            events.some((e) => e.type === "clear" && e.sessionId === write),
            "the clear committed but was never announced",
          );
        } else if (write === "registry-delete") {
          assert.equal(await store.registry.get(write), null, "the registry delete committed");
          assert.equal(await session.getMessage(`${write}-0`), null, "the session's messages went with it");
          assert.ok(
            events.some((e) => e.type === "clear" && e.sessionId === write),
            "the registry delete committed but was never announced",
          );
        } else if (write === "transfer-import") {
          assert.equal(
            (await session.getLatestLeaf())?.id,
            `${write}-1`,
            "the import committed its last step",
          );
          assert.ok(
            events.some((e) => e.type === "reset" && e.sessionId === write),
            "the import is stored but was never announced",
          );
        } else {
          assert.equal((await session.getCompactions()).length, 1, "the overlay committed");
          assert.ok(
            events.some((e) => e.type === "compaction" && e.sessionId === write),
            "the overlay is stored but was never announced",
          );
        }
        await store.close();
      });
    }
  });
}

const dir = mkdtempSync(join(tmpdir(), "feed-crash-"));
after(() => rmSync(dir, { recursive: true, force: true }));
crashes(
  "sqlite",
  async () => new SqliteStore(join(dir, "crash.db"), { changeLog: true }),
  (prefix, write) => ["sqlite", join(dir, "crash.db"), "", prefix, write],
);

const unavailable = await postgresUnavailable();
if (unavailable) {
  test("postgres: a writer killed after its write", { skip: unavailable }, () => undefined);
} else {
  const pool = testPool(4);
  const schema = "feed_crash_test";
  await dropSchema(pool, schema);
  after(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });
  crashes(
    "postgres",
    () => PostgresStore.open(pool, { schema, changeLog: true }),
    (prefix, write) => ["postgres", PG_URL, schema, prefix, write],
  );
}
