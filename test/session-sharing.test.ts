import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { Session, SqliteStore } from "../src/index.js";
import { openPathStores } from "../src/sqlite/shared-path.js";
import { assertSessionError } from "./helpers/session-error.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-sharing-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const hasProc = existsSync("/proc/self/fd");
const openFds = () => readdirSync("/proc/self/fd").length;
const text = (t: string) => [{ type: "text", text: t }];

/** One request of a chat server: a Session for the conversation, one append, one read. */
async function request(session: Session, i: number): Promise<void> {
  await session.appendMessage({ id: `u${i}`, role: "user", parts: text(`message ${i}`) });
  assert.equal((await session.getHistory()).length, 1);
}

describe("one connection per process", { skip: hasProc ? false : "needs /proc/self/fd" }, () => {
  test("200 requests on one store opened once keep the file descriptors constant", async () => {
    const store = new SqliteStore(join(dir, "store.db"));
    await request(Session.create(store).forSession("warm-up"), 0);
    const before = openFds();
    for (let i = 1; i <= 200; i++) await request(Session.create(store).forSession(`chat-${i}`), i);
    assert.equal(openFds(), before);
    await store.close();
  });

  test("200 requests of Session.create(path) never closed share one connection", async () => {
    const path = join(dir, "path.db");
    const before = openFds();
    for (let i = 1; i <= 200; i++) await request(Session.create(path).forSession(`chat-${i}`), i);
    assert.equal(openPathStores(), 1);
    assert.ok(openFds() - before <= 4, `${openFds() - before} descriptors opened for 200 requests`);
  });

  test("200 requests of Session.create(path) closed each time leave nothing open", async () => {
    const path = join(dir, "closed.db");
    const stores = openPathStores();
    const before = openFds();
    for (let i = 1; i <= 200; i++) {
      const session = Session.create(path).forSession(`chat-${i}`);
      await request(session, i);
      await session.close();
    }
    assert.equal(openFds(), before);
    assert.equal(openPathStores(), stores);
  });
});

describe("Session.create(path) shares the connection safely", () => {
  test("the last close closes it; closing one session leaves the others working", async () => {
    const path = join(dir, "refcount.db");
    const stores = openPathStores();
    const a = Session.create(path).forSession("a");
    const b = Session.create(path).forSession("b");
    await request(a, 1);
    assert.equal(openPathStores(), stores + 1);
    await a.close();
    await a.close(); // twice is harmless and does not release b's reference
    await request(b, 2);
    await assert.rejects(a.getHistory(), { code: "CLOSED" });
    await b.close();
    assert.equal(openPathStores(), stores);
    const c = Session.create(path).forSession("a");
    assert.equal((await c.getHistory()).length, 1, "reopened with the stored data");
    await c.close();
  });

  test("different options or :memory: get their own connection", async () => {
    const path = join(dir, "options.db");
    const stores = openPathStores();
    const normal = Session.create(path);
    const full = Session.create(path, { durability: "full" });
    await normal.ready();
    await full.ready();
    assert.equal(openPathStores(), stores + 2);
    const m1 = Session.create(":memory:");
    const m2 = Session.create(":memory:");
    await m1.appendMessage({ id: "x", role: "user", parts: text("only here") });
    assert.equal(await m2.getMessage("x"), null);
    await Promise.all([normal.close(), full.close(), m1.close(), m2.close()]);
    assert.equal(openPathStores(), stores);
  });

  test("forSession on a Session in use names the per-request pattern", async () => {
    const session = Session.create(new SqliteStore(":memory:")).forSession("one");
    await session.ready();
    assertSessionError(() => session.forSession("two"), {
      code: "INVALID_ARGUMENT",
      path: "forSession",
      rule: "conflict",
    });
  });
});
