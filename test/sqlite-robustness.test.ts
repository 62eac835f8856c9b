import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../src/sqlite/store.js";

const Database = loadBetterSqlite3();

const here = dirname(fileURLToPath(import.meta.url));
const appender = join(here, "fixtures", "sqlite-appender.ts");
const lockHolder = join(here, "fixtures", "hold-write-lock.ts");
const dir = mkdtempSync(join(tmpdir(), "agent-session-robust-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

function startAppender(file: string, session: string, prefix: string, count: number) {
  const child = spawn(process.execPath, ["--import", "tsx", appender, file, session, prefix, String(count)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const acknowledged: string[] = [];
  let stderr = "";
  let buffer = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    acknowledged.push(...lines.filter(Boolean));
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, acknowledged, exited, stderr: () => stderr };
}

/** How many rows of the search index contain `word` (each message contains it once per copy of its text). */
function indexedMatches(store: SqliteStore, word: string): number {
  return store.driver.get<{ n: number }>(
    "SELECT COUNT(*) AS n FROM agent_messages_fts WHERE agent_messages_fts MATCH ?",
    [`text : "${word}"`],
  )!.n;
}

describe("SQLite robustness", () => {
  test("SIGKILL in the middle of appending loses nothing that had resolved; the file stays intact", async () => {
    const file = join(dir, "killed.db");
    const run = startAppender(file, "s", "k", 100_000);
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (run.acknowledged.length >= 300) {
          clearInterval(timer);
          run.child.kill("SIGKILL");
          resolve();
        }
      }, 5);
      run.exited.then(({ code }) => {
        clearInterval(timer);
        reject(new Error(`appender exited early (${code}): ${run.stderr()}`));
      });
    });
    const { signal } = await run.exited;
    assert.equal(signal, "SIGKILL");
    const db = new Database(file);
    assert.equal(db.pragma("integrity_check", { simple: true }), "ok");
    db.close();
    const store = new SqliteStore(file);
    const session = store.session("s");
    for (const id of run.acknowledged) assert.ok(await session.getMessage(id), `acknowledged ${id} survived`);
    const length = await session.getPathLength();
    assert.ok(length >= run.acknowledged.length);
    const history = await session.getHistory();
    assert.equal(history.length, length);
    // The batch the killed process had not indexed yet is indexed by the next search, each message once.
    const last = run.acknowledged[run.acknowledged.length - 1]!;
    assert.deepEqual(
      (await store.searchMessages(`"${last.replace("-", " ")}"`)).map((hit) => hit.id),
      [last],
    );
    assert.equal(indexedMatches(store, "message"), length);
    await session.appendMessage({ id: "after-crash", role: "user", parts: [] });
    assert.equal((await session.getLatestLeaf())?.id, "after-crash");
    await store.close();
  });

  test("four processes appending to one session at once: no busy error, nothing lost, one chain", async () => {
    const file = join(dir, "shared.db");
    new SqliteStore(file).close();
    const runs = [0, 1, 2, 3].map((n) => startAppender(file, "shared", `p${n}`, 500));
    const results = await Promise.all(runs.map((r) => r.exited));
    for (const [n, result] of results.entries()) assert.equal(result.code, 0, runs[n]!.stderr());
    const store = new SqliteStore(file);
    const session = store.session("shared");
    const history = await session.getHistory();
    assert.equal(history.length, 2000);
    assert.equal(new Set(history.map((m) => m.id)).size, 2000);
    for (const run of runs) assert.equal(run.acknowledged.length, 500);
    // Each process indexed batches as it went, taking turns on the write lock: every message is indexed once.
    await store.searchMessages("message");
    assert.equal(indexedMatches(store, "message"), 2000);
    await store.close();
  });

  test("opening a new file while another process holds its write lock waits to switch it to WAL", async () => {
    const file = join(dir, "switch.db");
    const db = new Database(file);
    db.exec("CREATE TABLE held (x)");
    db.close();
    // The holder keeps the rollback journal's write lock; switching to WAL needs it, and SQLite answers busy at
    // once rather than through busy_timeout, so opening must wait it out itself.
    const holder = spawn(process.execPath, ["--import", "tsx", lockHolder, file, "300"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise<number | null>((resolve) => holder.on("exit", resolve));
    await new Promise<void>((resolve, reject) => {
      holder.stdout.once("data", () => resolve());
      exited.then((code) => reject(new Error(`the lock holder exited early (${code})`)));
    });
    const store = new SqliteStore(file);
    assert.equal(store.driver.get<{ journal_mode: string }>("PRAGMA journal_mode")?.journal_mode, "wal");
    await store.close();
    assert.equal(await exited, 0);
    const check = new Database(file);
    assert.equal((check.prepare("SELECT COUNT(*) AS n FROM held").get() as { n: number }).n, 1);
    check.close();
  });
});
