import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { SessionProvider } from "../src/contract/provider.js";
import { AgentSessionProvider, MemoryStore, Session, SqliteStore } from "../src/index.js";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStoreProvider } from "../src/sqlite/session-provider.js";
import { ids, msg } from "../src/testing/contract/harness.js";
import { loadContextTurn } from "./context/backends.js";
import { assertSessionError, rejectsWithIssue } from "./helpers/session-error.js";
import { sqlTagAgent } from "./helpers/sql-tag.js";
import { warningsOf } from "./helpers/warnings.js";

const Database = loadBetterSqlite3();

const dir = mkdtempSync(join(tmpdir(), "agent-session-session-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

describe("Session: creation", () => {
  test("on a SQLite path: usable at once, reopened file keeps everything", async () => {
    const file = join(dir, "path.db");
    const session = Session.create(file);
    await session.appendMessage(msg("u1", "hello"));
    await session.appendMessage(msg("a1", "hi", "assistant"));
    await session.close();
    const again = Session.create(file);
    assert.deepEqual(ids(await again.getHistory()), ["u1", "a1"]);
    await again.close();
  });

  test("on a better-sqlite3 handle and on a sql-tag object (reference code runs unchanged)", async () => {
    const db = new Database(":memory:");
    const a = Session.create(db).forSession("x");
    await a.appendMessage(msg("m"));
    const agent = sqlTagAgent();
    const b = Session.create(agent);
    await b.appendMessage(msg("n"));
    assert.deepEqual(ids(await Session.create(agent).getHistory()), ["n"]);
    const provider = new AgentSessionProvider(agent, "other");
    await provider.appendMessage(msg("p"));
    assert.deepEqual(ids(await Session.create(agent).forSession("other").getHistory()), ["p"]);
    assert.deepEqual(ids(await Session.create(db).forSession("x").getHistory()), ["m"]);
    db.close();
  });

  test("on a store, with forSession namespacing, in any builder order", async () => {
    const store = new MemoryStore();
    const one = Session.create(store).forSession("one");
    const two = Session.create(store).forSession("two");
    await one.appendMessage(msg("m", "one"));
    await two.appendMessage(msg("m", "two"));
    assert.equal((await one.getMessage("m"))?.parts[0]?.text, "one");
    assert.equal((await new Session(store, { sessionId: "two" }).getMessage("m"))?.parts[0]?.text, "two");
  });

  test("on a user SessionProvider; forSession on it is refused clearly", async () => {
    const provider = new MemoryStore().session("p") as SessionProvider;
    const session = new Session(provider);
    await session.appendMessage(msg("m"));
    assert.deepEqual(ids(await session.getHistory()), ["m"]);
    await rejectsWithIssue(Session.create(provider).forSession("x").getHistory(), {
      code: "INVALID_ARGUMENT",
      path: "forSession",
      rule: "conflict",
    });
  });

  test("bad sources and late configuration are clear errors", async () => {
    assertSessionError(() => Session.create(42 as never), {
      code: "INVALID_ARGUMENT",
      path: "source",
      rule: "type",
    });
    assert.throws(() => Session.create({} as never), { code: "INVALID_ARGUMENT" });
    assert.throws(() => Session.create(""), { code: "INVALID_ARGUMENT" });
    const session = Session.create(new MemoryStore());
    await session.ready();
    assert.throws(() => session.forSession("late"), { code: "INVALID_ARGUMENT" });
  });

  test("a transient failure while opening (a block's get, the skill restore's read) fails that call only", async () => {
    // A Session kept for an object's lifetime (e.g. built in onStart) must not fail forever after one blip.
    const store = new MemoryStore();
    const writer = store.session("s");
    await writer.appendMessage(loadContextTurn("a1", "k", "doc"));
    let blockFails = 1;
    let readFails = 1;
    const provider = new Proxy(store.session("s"), {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (name !== "getToolMessages" || typeof value !== "function") {
          return typeof value === "function" ? value.bind(target) : value;
        }
        return (...args: unknown[]) =>
          readFails-- > 0 ? Promise.reject(new Error("read blip")) : value.apply(target, args);
      },
    });
    const skills = { get: async () => "- k", load: async () => "doc" };
    const session = Session.create(provider)
      .withContext("soul", {
        provider: { get: async () => (blockFails-- > 0 ? Promise.reject(new Error("get blip")) : "terse") },
      })
      .withContext("skills", { provider: skills });
    await assert.rejects(session.getHistory(), /get blip/);
    await assert.rejects(session.getHistory(), /read blip/);
    assert.deepEqual(ids(await session.getHistory()), ["a1"]);
    assert.equal(session.getContextBlock("soul")?.content, "terse");
    assert.deepEqual([...(await session.getLoadedSkillKeys())], ["skills:k"]);
  });
});

describe("Session: history API", () => {
  test("append, branches, regenerate, delete, clear", async () => {
    const session = Session.create(new SqliteStore(":memory:")).forSession("chat");
    assert.equal((await session.appendMessage(msg("u1", "question"))).inserted, true);
    await session.appendMessage(msg("a1", "answer one", "assistant"));
    await session.appendMessage(msg("a2", "answer two", "assistant"), "u1");
    assert.deepEqual(ids(await session.getBranches("u1")), ["a1", "a2"]);
    assert.deepEqual(ids(await session.getHistory("a1")), ["u1", "a1"]);
    assert.equal((await session.getLatestLeaf())?.id, "a2");
    assert.equal(await session.getPathLength(), 2);
    assert.deepEqual(ids(await session.search("answer")).sort(), ["a1", "a2"]);
    assert.deepEqual(ids(await session.search("answer", { branch: "active" })), ["a2"]);
    await session.deleteMessages(["u1"]);
    assert.deepEqual(ids(await session.getHistory()), ["a2"]);
    await session.clearMessages();
    assert.deepEqual(await session.getHistory(), []);
  });

  test("getRecentHistory and row stats come from the provider", async () => {
    const session = Session.create(new MemoryStore());
    for (let i = 0; i < 5; i++) await session.appendMessage(msg(`m${i}`));
    const window = await session.getRecentHistory(1);
    assert.deepEqual(ids(window.messages), ["m4"]);
    assert.equal(window.truncated, true);
    assert.equal((await session.getHistoryRowStats())?.length, 5);
  });

  test("a provider without search or recent history: clear error, honest fallback", async () => {
    const inner = new MemoryStore().session("");
    const minimal: SessionProvider = {
      getMessage: (id) => inner.getMessage(id),
      getHistory: (leaf) => inner.getHistory(leaf),
      getLatestLeaf: () => inner.getLatestLeaf(),
      getBranches: (id) => inner.getBranches(id),
      getPathLength: (leaf) => inner.getPathLength(leaf),
      appendMessage: (m, p) => inner.appendMessage(m, p),
      updateMessage: (m) => inner.updateMessage(m),
      deleteMessages: (i) => inner.deleteMessages(i),
      clearMessages: () => inner.clearMessages(),
      addCompaction: (s, f, t) => inner.addCompaction(s, f, t),
      getCompactions: () => inner.getCompactions(),
    };
    const session = new Session(minimal);
    await session.appendMessage(msg("m"));
    await assert.rejects(session.search("m"), { code: "UNSUPPORTED" });
    let window: Awaited<ReturnType<typeof session.getRecentHistory>> | undefined;
    const warned = await warningsOf("AgentSessionProviderWarning", async () => {
      window = await session.getRecentHistory(1);
      await session.getRecentHistory(1);
    });
    assert.deepEqual(
      warned.map((w) => w.message),
      ["this SessionProvider has no getRecentHistory; reading the whole path instead"],
      "once per session",
    );
    assert.ok(window);
    assert.equal(window.truncated, false);
    assert.equal(window.totalContentBytes, Buffer.byteLength(JSON.stringify(msg("m"))));
    assert.equal(await session.getHistoryRowStats(), null);
  });
});

describe("Session: one serialisation per append", () => {
  test("our providers store what was measured; a wrapper that changes the message in place is serialised anew", async () => {
    const store = new SqliteStore(":memory:");
    const inner = store.session("");
    // A decorator of the kind apps write: stamps the message in place, then forwards it unchanged.
    const stamping: SessionProvider = Object.assign(Object.create(inner) as SessionProvider, {
      appendMessage: (message: Parameters<SessionProvider["appendMessage"]>[0], parentId?: string | null) => {
        message.metadata = { stamped: true };
        return inner.appendMessage(message, parentId);
      },
    });
    const wrapped = new Session(stamping);
    await wrapped.appendMessage(msg("w", "wrapped"));
    assert.deepEqual((await inner.getMessage("w"))?.metadata, { stamped: true });
    // The same from a subclass of ours.
    class StampingProvider extends SqliteStoreProvider {
      override appendMessage(
        message: Parameters<SessionProvider["appendMessage"]>[0],
        parentId?: string | null,
      ) {
        message.metadata = { subclass: true };
        return super.appendMessage(message, parentId);
      }
    }
    await new Session(new StampingProvider(store, "")).appendMessage(msg("s", "subclassed"));
    assert.deepEqual((await inner.getMessage("s"))?.metadata, { subclass: true });
    const direct = Session.create(store);
    const message = msg("d", "direct");
    await direct.appendMessage(message);
    message.parts[0]!.text = "changed after the append";
    assert.equal((await inner.getMessage("d"))?.parts[0]?.text, "direct");
    await store.close();
  });

  test("every write through a Session serialises its message once on the memory and SQLite providers", async () => {
    const stringify = JSON.stringify;
    let watched: unknown;
    let count = 0;
    // Counts only serialisations of the written message object itself (the stored form is that same object).
    JSON.stringify = ((value: unknown, ...rest: []) => {
      if (value === watched) count++;
      return stringify(value, ...rest);
    }) as typeof JSON.stringify;
    const once = async (message: ReturnType<typeof msg>, write: () => Promise<unknown>) => {
      watched = message;
      count = 0;
      await write();
      watched = undefined;
      return count;
    };
    try {
      for (const store of [new MemoryStore(), new SqliteStore(":memory:")]) {
        const session = Session.create(store).forSession("once");
        await session.ready();
        const counts: number[] = [];
        const a = msg("a", "appended");
        counts.push(await once(a, () => session.appendMessage(a)));
        const b = msg("b", "upserted");
        counts.push(await once(b, () => session.upsertMessage(b)));
        const b2 = msg("b", "upserted again");
        counts.push(await once(b2, () => session.upsertMessage(b2)));
        const a2 = msg("a", "updated");
        counts.push(await once(a2, () => session.updateMessage(a2)));
        const c = msg("c", "imported");
        counts.push(await once(c, () => session.importMessage(c)));
        assert.deepEqual(counts, [1, 1, 1, 1, 1], store.constructor.name);
        await session.close();
        await store.close();
      }
    } finally {
      JSON.stringify = stringify;
    }
  });
});
