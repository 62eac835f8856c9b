// The CLI and the files it is pointed at: where `export -o` writes, read-only commands on an empty or special file, adopt
// with nothing to adopt, import checks across records, and option values that start with a dash.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { after, before, describe, test } from "node:test";
import { loadBetterSqlite3 } from "../../src/sql/engines/sqlite/better-sqlite3.js";
import { parseJson, runCli, tempDir } from "./helpers.js";

const tmp = tempDir();
const db = tmp.path("demo.db");
after(() => tmp.remove());

/** A FIFO at `name` in the temp dir (never under /dev). */
function fifo(name: string): string {
  const path = tmp.path(name);
  execFileSync("mkfifo", [path]);
  return path;
}

function assertError(result: { code: number | null; stderr: string }, code: number, pattern: RegExp) {
  assert.equal(result.code, code, `exit code (stderr: ${result.stderr})`);
  const lines = result.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `one line: ${result.stderr}`);
  assert.match(lines[0]!, /^agent-session: /);
  assert.match(lines[0]!, pattern);
}

const MESSAGE_TIME = "2025-01-01T00:00:00.000Z";

function messageLine(id: string, parent: string | null, text: string): string {
  return JSON.stringify({
    type: "message",
    session: "s",
    id,
    parent,
    role: "user",
    createdAt: MESSAGE_TIME,
    message: { id, role: "user", parts: [{ type: "text", text }] },
  });
}

/** A small export: session `s` with the given leaf and message lines, and an end record that counts them. */
function exportText(leaf: string | null, messages: string[]): string {
  return `${[
    JSON.stringify({ type: "header", format: "agent-session-export", version: 1 }),
    JSON.stringify({ type: "session", id: "s", leaf, registry: null }),
    ...messages,
    JSON.stringify({
      type: "end",
      sessions: 1,
      messages: messages.length,
      compactions: 0,
      blocks: 0,
      entries: 0,
    }),
  ].join("\n")}\n`;
}

describe("CLI files and import checks", { concurrency: true }, () => {
  before(async () => {
    const result = await runCli(["demo", "--db", db]);
    assert.equal(result.code, 0, result.stderr);
  });

  test("export -o through a symlink writes the link's target and keeps the link", async () => {
    mkdirSync(tmp.path("real"));
    const target = tmp.path("real/backup.jsonl");
    writeFileSync(target, "old\n");
    const link = tmp.path("link.jsonl");
    symlinkSync("real/backup.jsonl", link);
    const result = await runCli(["export", "-o", link, "--db", db]);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(lstatSync(link).isSymbolicLink(), "the link is still a link");
    assert.match(readFileSync(target, "utf8"), /^\{"type":"header"/);
    assert.deepEqual(readdirSync(tmp.path("real")), ["backup.jsonl"], "no temporary file is left");
  });

  test("export -o to a FIFO writes into it instead of replacing it", async () => {
    const pipe = fifo("out.fifo");
    const reader = spawn("cat", [pipe], { stdio: ["ignore", "pipe", "inherit"] });
    let read = "";
    reader.stdout.setEncoding("utf8").on("data", (chunk: string) => (read += chunk));
    // Listened for first: the reader may exit (the export closed the FIFO) before runCli returns.
    const closed = once(reader, "close");
    try {
      const result = await runCli(["export", "-o", pipe, "--db", db]);
      assert.equal(result.code, 0, result.stderr);
      assert.ok(lstatSync(pipe).isFIFO(), "the FIFO is still a FIFO");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise((resolve) => {
        timer = setTimeout(resolve, 10_000);
      });
      await Promise.race([closed, timeout]);
      clearTimeout(timer);
      assert.match(read, /^\{"type":"header"/);
      assert.match(read, /"type":"end"/);
    } finally {
      if (reader.exitCode === null) reader.kill();
    }
  });

  test("export -o to a directory is a clear error and writes nothing", async () => {
    const dir = tmp.path("out-dir");
    mkdirSync(dir);
    assertError(await runCli(["export", "-o", dir, "--db", db]), 1, /out-dir is a directory$/);
    assert.deepEqual(readdirSync(dir), []);
    assert.ok(!readdirSync(tmp.dir).some((name) => name.includes(".tmp-")));
  });

  test("read-only commands refuse an empty file and leave it empty", async () => {
    const empty = tmp.path("empty.db");
    writeFileSync(empty, "");
    const commands = [
      ["ls"],
      ["stats"],
      ["prune", "--older-than", "1d"],
      ["export"],
      ["tree", "s"],
      ["show", "s"],
      ["blocks", "s"],
      ["search", "x"],
      ["serve", "--port", "0"],
    ];
    for (const args of commands) {
      assertError(
        await runCli([...args, "--db", empty]),
        1,
        /empty\.db is an empty file without agent-session tables/,
      );
      assert.equal(statSync(empty).size, 0, `${args[0]} left the file empty`);
    }
    assert.equal(existsSync(`${empty}-wal`), false);
  });

  test("demo and import still turn an empty file into a store", async () => {
    const forDemo = tmp.path("empty-demo.db");
    writeFileSync(forDemo, "");
    assert.equal((await runCli(["demo", "--db", forDemo])).code, 0);
    const file = tmp.path("one.jsonl");
    writeFileSync(file, exportText("m1", [messageLine("m1", null, "hi")]));
    const forImport = tmp.path("empty-import.db");
    writeFileSync(forImport, "");
    const imported = await runCli(["import", file, "--db", forImport]);
    assert.equal(imported.code, 0, imported.stderr);
    const sessions = parseJson<{ id: string }[]>(await runCli(["ls", "--json", "--db", forImport]));
    assert.deepEqual(
      sessions.map((s) => s.id),
      ["s"],
    );
  });

  test("a FIFO as --db is a clear error, not a disk I/O error", async () => {
    const pipe = fifo("db.fifo");
    assertError(await runCli(["ls", "--db", pipe]), 1, /db\.fifo is not a regular file/);
    const file = tmp.path("for-fifo.jsonl");
    writeFileSync(file, exportText(null, []));
    assertError(await runCli(["import", file, "--db", pipe]), 1, /db\.fifo is not a regular file/);
    assert.ok(lstatSync(pipe).isFIFO());
  });

  test("adopt on an empty file reports nothing to adopt and writes nothing", async () => {
    const empty = tmp.path("adopt-empty.db");
    writeFileSync(empty, "");
    const result = await runCli(["adopt", "--db", empty]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /No reference tables .* nothing was written/);
    assert.equal(statSync(empty).size, 0);
    assert.deepEqual(
      readdirSync(tmp.dir).filter((name) => name.startsWith("adopt-empty.db")),
      ["adopt-empty.db"],
    );
  });

  test("adopt on another application's SQLite file without the reference's tables writes nothing", async () => {
    const other = tmp.path("adopt-other.db");
    const Database = loadBetterSqlite3();
    const sqlite = new Database(other);
    sqlite.exec("CREATE TABLE t (x)");
    sqlite.close();
    const before = readFileSync(other);
    const result = await runCli(["adopt", "--db", other]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /No reference tables .* nothing was written/);
    assert.ok(readFileSync(other).equals(before), "the file is unchanged");
  });

  test("import refuses a session whose leaf is not one of its messages", async () => {
    const file = tmp.path("bad-leaf.jsonl");
    writeFileSync(file, exportText("nope", [messageLine("m1", null, "hi")]));
    const target = tmp.path("bad-leaf.db");
    assertError(
      await runCli(["import", file, "--db", target]),
      1,
      /line 2: the leaf "nope" of session "s" is neither one of its messages in the file nor stored/,
    );
    if (existsSync(target)) assert.deepEqual(parseJson(await runCli(["ls", "--json", "--db", target])), []);
  });

  test("import refuses one message id twice with different content, and accepts an exact repeat", async () => {
    const file = tmp.path("twice.jsonl");
    writeFileSync(
      file,
      exportText("m1", [messageLine("m1", null, "hi"), messageLine("m1", null, "changed")]),
    );
    const target = tmp.path("twice.db");
    assertError(
      await runCli(["import", file, "--db", target]),
      1,
      /line 4: message "m1" appears twice in session "s" with different content/,
    );
    if (existsSync(target)) assert.deepEqual(parseJson(await runCli(["ls", "--json", "--db", target])), []);
    const same = tmp.path("same-twice.jsonl");
    writeFileSync(same, exportText("m1", [messageLine("m1", null, "hi"), messageLine("m1", null, "hi")]));
    const again = await runCli(["import", same, "--db", tmp.path("same-twice.db")]);
    assert.equal(again.code, 0, again.stderr);
  });

  test("an option value that starts with a dash is checked as a value", async () => {
    assertError(
      await runCli(["prune", "--older-than", "-5d", "--db", db]),
      2,
      /--older-than must look like .*"-5d" is not a valid duration/,
    );
    assertError(
      await runCli(["ls", "--limit", "-1", "--db", db]),
      2,
      /--limit must be a whole number >= 0, got "-1"/,
    );
    assertError(await runCli(["prune", "--older-than", "--db", db]), 2, /option --older-than needs a value/);
  });
});
