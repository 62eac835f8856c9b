import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { hostOfHeader, isLoopback } from "../../src/cli/serve/loopback.js";
import { startViewer } from "../../src/cli/serve/server.js";
import { FileSystemSkillProvider } from "../../src/context/fs-skills.js";
import type { SessionMessage } from "../../src/contract/message.js";
import { errorMessage, SessionError } from "../../src/errors.js";
import { MemoryStore, Session, SqliteStore } from "../../src/index.js";
import { describe as describeValue } from "../../src/message/describe.js";
import { parseMessage } from "../../src/message/json.js";
import { searchPlan } from "../../src/search/options.js";
import { byteBudget, searchLimit } from "../../src/store/limits.js";
import { msg, rejectsWithCode } from "../../src/testing/contract/harness.js";

const temp = mkdtempSync(join(tmpdir(), "agent-session-security-"));
after(() => rmSync(temp, { recursive: true, force: true }));

function status(url: string, host: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { Host: host, "X-Agent-Session-Viewer": "1" } }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("viewer: the Host check holds on every loopback address", () => {
  test("isLoopback knows all of 127.0.0.0/8, ::1 and mapped IPv4, and nothing else", () => {
    for (const host of [
      "127.0.0.1",
      "127.0.0.2",
      "127.255.255.254",
      "localhost",
      "LOCALHOST",
      "::1",
      "[::1]",
    ]) {
      assert.equal(isLoopback(host), true, host);
    }
    assert.equal(isLoopback("::ffff:127.0.0.9"), true);
    for (const host of [
      "0.0.0.0",
      "::",
      "10.0.0.1",
      "128.0.0.1",
      "attacker.example",
      "127.0.0.1.nip.io",
      "",
    ]) {
      assert.equal(isLoopback(host), false, host);
    }
    assert.equal(hostOfHeader("127.0.0.2:8080"), "127.0.0.2");
    assert.equal(hostOfHeader("[::1]:80"), "[::1]");
  });

  test("serve --host 127.0.0.2 refuses a foreign Host header (DNS rebinding)", async () => {
    const store = new MemoryStore();
    const viewer = await startViewer(store, { host: "127.0.0.2", port: 0, title: "t" });
    try {
      const port = new URL(viewer.url).port;
      assert.equal(await status(`${viewer.url}api/sessions`, "attacker.example"), 403);
      assert.equal(await status(`${viewer.url}api/sessions`, `127.0.0.2:${port}`), 200);
      assert.equal(await status(`${viewer.url}api/sessions`, `localhost:${port}`), 200);
    } finally {
      await viewer.close();
    }
  });
});

describe("file-system skills: no write leaves the directory", () => {
  test("set() through a symlinked folder is refused and writes nothing outside", async () => {
    const skills = join(temp, "skills");
    const outside = join(temp, "outside");
    mkdirSync(skills, { recursive: true });
    mkdirSync(outside, { recursive: true });
    symlinkSync(outside, join(skills, "linkdir"));
    const provider = new FileSystemSkillProvider(skills);
    await rejectsWithCode(provider.set("linkdir/x", "pwned"), "INVALID_ARGUMENT", { path: "key" });
    await rejectsWithCode(provider.set("linkdir/deep/x", "pwned"), "INVALID_ARGUMENT", { path: "key" });
    assert.equal(existsSync(join(outside, "x.md")), false);
    assert.equal(existsSync(join(outside, "deep")), false);
    await provider.set("inside/ok", "fine");
    assert.equal(await provider.load("inside/ok"), "fine");
  });
});

describe("messages are stored as they are", () => {
  test("a message with toJSON is refused instead of stored as whatever toJSON returns", async () => {
    const store = new MemoryStore();
    const s = store.session("s");
    const sneaky = { ...msg("m1"), toJSON: () => 1 } as unknown as SessionMessage;
    await rejectsWithCode(s.appendMessage(sneaky), "INVALID_MESSAGE", { path: "toJSON" });
    const sqlite = new SqliteStore(":memory:");
    await rejectsWithCode(sqlite.session("s").appendMessage(sneaky), "INVALID_MESSAGE");
    assert.equal(await sqlite.session("s").getMessage("m1"), null);
    await sqlite.close();
  });

  test("createdAt must be a valid Date or an ISO-8601 date-time; only ISO strings are revived", async () => {
    const s = new MemoryStore().session("s");
    for (const createdAt of ["1", "yesterday", "2025-01-01", new Date(Number.NaN), 5]) {
      const bad = msg("m", "x", "user", { createdAt } as unknown as Partial<SessionMessage>);
      await rejectsWithCode(s.appendMessage(bad), "INVALID_MESSAGE", { path: "createdAt" });
    }
    await s.appendMessage(msg("ok", "x", "user", { createdAt: new Date("2025-03-04T05:06:07.000Z") }));
    assert.equal((await s.getMessage("ok"))?.createdAt?.toISOString(), "2025-03-04T05:06:07.000Z");
    // A row written before the rule (or by hand) keeps a non-ISO string as it is rather than becoming 2001.
    const legacy = parseMessage(JSON.stringify({ ...msg("old"), createdAt: "1" }));
    assert.equal(legacy?.createdAt as unknown, "1");
    const iso = parseMessage(JSON.stringify({ ...msg("new"), createdAt: "2025-03-04T05:06:07+02:00" }));
    assert.ok(iso?.createdAt instanceof Date);
  });
});

describe("error messages never throw, whatever the value", () => {
  const hostile = [
    Object.create(null),
    {
      toString: () => {
        throw new Error("boom");
      },
    },
    Symbol("s"),
    10n,
    () => 1,
    [1],
  ];

  test("search and budget arguments report INVALID_ARGUMENT, never a TypeError", async () => {
    for (const value of hostile) {
      assert.throws(() => searchLimit(value), { code: "INVALID_ARGUMENT" });
      assert.throws(() => searchPlan({ branch: value }), { code: "INVALID_ARGUMENT" });
      assert.throws(() => byteBudget(value, 1), { code: "INVALID_ARGUMENT" });
      assert.throws(() => byteBudget(10, value), { code: "INVALID_ARGUMENT" });
      assert.equal(typeof describeValue(value), "string");
      assert.equal(typeof errorMessage(value), "string");
    }
    const session = Session.create(new MemoryStore().session("s"));
    await rejectsWithCode(session.search("x", { limit: Object.create(null) }), "INVALID_ARGUMENT");
    const store = new SqliteStore(":memory:");
    await rejectsWithCode(store.searchMessages("x", { limit: Object.create(null) }), "INVALID_ARGUMENT");
    await store.close();
  });
});

describe("a closed Session refuses every call with CLOSED", () => {
  test("over a SQLite file it opened itself: CLOSED, not STORAGE 'connection is not open'", async () => {
    const session = Session.create(join(temp, "closed.db"));
    await session.appendMessage(msg("m1"));
    await session.close();
    await rejectsWithCode(session.appendMessage(msg("m2")), "CLOSED");
    await rejectsWithCode(session.getHistory(), "CLOSED");
    await rejectsWithCode(session.search("text"), "CLOSED");
  });

  test("over a store it was given: the store stays open for others, this session is closed", async () => {
    const store = new SqliteStore(":memory:");
    const session = Session.create(store).forSession("a");
    await session.appendMessage(msg("m1"));
    await session.close();
    await rejectsWithCode(session.getMessage("m1"), "CLOSED");
    assert.equal((await store.session("a").getMessage("m1"))?.id, "m1");
    await store.close();
    await assert.rejects(store.session("a").getMessage("m1"), (e: unknown) => {
      assert.ok(e instanceof SessionError);
      assert.equal(e.code, "CLOSED");
      return true;
    });
  });
});
