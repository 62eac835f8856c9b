import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { probeSqliteFile } from "../src/sqlite/maintenance.js";
import { SqliteStore } from "../src/sqlite/store.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-probe-"));
after(() => rmSync(dir, { recursive: true, force: true }));

// Another process holds the file's exclusive lock for a moment (as the last connection does while it checkpoints on
// close), a plain node:sqlite (or better-sqlite3) script so the lock is real and held outside this process.
const HOLDER = `
let db;
try {
  db = new (require("node:sqlite").DatabaseSync)(process.argv[2]);
} catch {
  db = new (require(process.argv[1]))(process.argv[2]);
}
db.exec("PRAGMA locking_mode = EXCLUSIVE; BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS held (a); COMMIT");
process.stdout.write("locked\\n");
setTimeout(() => db.close(), Number(process.argv[3]));
`;

test("probing a file another process holds locked for a moment waits instead of failing", async () => {
  const file = join(dir, "held.db");
  const store = new SqliteStore(file);
  await store.session("s").appendMessage({ id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] });
  await store.close();
  const betterSqlite3 = createRequire(import.meta.url).resolve("better-sqlite3");
  const holder = spawn(process.execPath, ["-e", HOLDER, betterSqlite3, file, "400"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise((resolve) => holder.once("exit", resolve));
  await new Promise<void>((resolve, reject) => {
    holder.stdout.once("data", () => resolve());
    holder.once("exit", (code) => reject(new Error(`lock holder exited early (${code})`)));
  });
  try {
    // node:sqlite's default busy timeout is 0: this threw "database is locked" at once.
    assert.equal(probeSqliteFile(file), "agent-session");
  } finally {
    await exited;
  }
});
