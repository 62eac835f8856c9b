import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { SessionStore } from "../../src/contract/store.js";
import { SessionManager } from "../../src/manager/manager.js";
import { MemoryStore } from "../../src/memory/store.js";
import { Session } from "../../src/session/session.js";
import { openSqlite } from "../../src/sql/engines/sqlite/open.js";
import { migrate, SQLITE_MIGRATIONS } from "../../src/sqlite/schema.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { ids, msg, rejectsWithCode } from "../../src/testing/contract/harness.js";
import { assertSessionError, rejectsWithIssue } from "../helpers/session-error.js";
import { sqlTagAgent } from "../helpers/sql-tag.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-manager-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

const long = (id: string) => msg(id, `${id} `.repeat(40));

describe("SessionManager: sources", () => {
  test("a SQLite path: the manager owns the store and the data survives reopening", async () => {
    const file = join(dir, "owned.db");
    const first = SessionManager.create(file);
    const info = await first.create("persistent");
    await first.append(info.id, msg("m1", "kept on disk"));
    await first.close();
    const second = new SessionManager(file);
    assert.deepEqual(ids(await second.list()), [info.id]);
    assert.deepEqual(ids(await second.getHistory(info.id)), ["m1"]);
    await second.close();
  });

  test("a sql-tag object (an Agent) shares one store with Session.create on the same object", async () => {
    const agent = sqlTagAgent();
    const manager = SessionManager.create(agent);
    const info = await manager.create("chat");
    await manager.append(info.id, msg("m1", "hello"));
    const session = Session.create(agent).forSession(info.id);
    assert.deepEqual(ids(await session.getHistory()), ["m1"]);
    agent.db.close();
  });

  test("a single SessionProvider or a store without a registry is UNSUPPORTED", () => {
    assert.throws(() => SessionManager.create(new MemoryStore().session("x") as never), {
      code: "UNSUPPORTED",
    });
    const inner = new MemoryStore();
    const bare: SessionStore = {
      backend: "custom",
      session: (id) => inner.session(id),
      searchMessages: (query, options) => inner.searchMessages(query, options),
      close: async () => {},
    };
    assert.throws(() => SessionManager.create(bare), { code: "UNSUPPORTED" });
    assert.throws(() => SessionManager.create(42 as never), { code: "INVALID_ARGUMENT" });
  });

  test("an existing version-2 SQLite database gains the registry on open, messages intact", async () => {
    const file = join(dir, "v2.db");
    const driver = openSqlite(file);
    migrate(
      driver,
      SQLITE_MIGRATIONS.filter((m) => m.version < 3),
    );
    driver.close();
    const before = new SqliteStore(file);
    await before.session("legacy").appendMessage(msg("old", "from before the registry"));
    await before.close();
    const manager = SessionManager.create(file);
    const info = await manager.create("adopted", { id: "legacy" });
    assert.equal(info.id, "legacy");
    assert.deepEqual(ids(await manager.getHistory("legacy")), ["old"]);
    await manager.close();
  });
});

describe("SessionManager: builder", () => {
  test("bad templates fail at the builder call", () => {
    const m = () => SessionManager.create(new MemoryStore());
    assert.throws(() => m().withContext(""), { code: "INVALID_ARGUMENT" });
    assert.throws(() => m().withContext("a").withContext("a"), { code: "INVALID_ARGUMENT" });
    assert.throws(() => m().withContext("a", { maxTokens: -1 }), { code: "INVALID_ARGUMENT" });
    assert.throws(() => m().withCachedPrompt({ get: async () => null } as never), {
      code: "INVALID_ARGUMENT",
    });
    assert.throws(() => m().onCompaction("x" as never), { code: "INVALID_ARGUMENT" });
    assert.throws(() => m().compactAfter(-5), { code: "INVALID_ARGUMENT" });
    assert.throws(() => m().compactAfter(Number.NaN), { code: "INVALID_ARGUMENT" });
    assert.throws(() => m().onCompactionError(5 as never), { code: "INVALID_ARGUMENT" });
    assert.throws(() => m().withSearchableHistory("h").withSearchableHistory("g"), {
      code: "INVALID_ARGUMENT",
    });
    assert.throws(() => m().withSearchableHistory("h").withContext("h"), { code: "INVALID_ARGUMENT" });
  });

  test("templates are validated once, at the builder call, not again for each session", () => {
    // Validating a prompt store reads its get and set: the reads are counted.
    let reads = 0;
    const store = { get: async () => null, set: async () => {} };
    const counted = new Proxy(store, {
      get: (target, key) => {
        reads++;
        return Reflect.get(target, key);
      },
    });
    const manager = SessionManager.create(new MemoryStore()).withCachedPrompt(counted).compactAfter(100);
    const atBuilder = reads;
    assert.ok(atBuilder > 0);
    for (let i = 0; i < 5; i++) manager.getSession(`s${i}`);
    manager.compactAfter(200).withToolOutputLimits({ maxHitChars: 600 });
    assert.equal(reads, atBuilder);
  });

  test("blocks and the prompt store are fixed once the first session is handed out", async () => {
    const manager = SessionManager.create(new MemoryStore());
    const info = await manager.create("a");
    manager.withContext("before");
    manager.getSession(info.id);
    for (const [late, path] of [
      [() => manager.withContext("late"), "withContext"],
      [() => manager.withCachedPrompt(), "withCachedPrompt"],
      [() => manager.withSearchableHistory("h"), "withSearchableHistory"],
    ] as const) {
      assertSessionError(late, { code: "INVALID_ARGUMENT", path, rule: "conflict" });
    }
  });

  test("compaction settings may change at any time and reach sessions already handed out", async () => {
    const manager = SessionManager.create(new MemoryStore());
    const info = await manager.create("a");
    const session = manager.getSession(info.id);
    await manager.append(info.id, msg("m1", "x".repeat(400)));
    await manager.append(info.id, msg("m2", "y".repeat(400)));
    const errors: unknown[] = [];
    manager
      .onCompaction(async (messages) => ({
        fromMessageId: messages[0]!.id,
        toMessageId: messages[0]!.id,
        summary: "s",
      }))
      .compactAfter(10)
      .onCompactionError((error) => {
        errors.push(error);
      });
    await manager.append(info.id, msg("m3"));
    assert.deepEqual(errors, []);
    assert.equal((await session.getCompactions()).length, 1);
    // A session created after the change gets it too.
    const later = await manager.create("b");
    await manager.append(later.id, msg("b1", "z".repeat(400)));
    assert.equal((await manager.getCompactions(later.id)).length, 1);
  });

  test("onCompaction, compactAfter with tokenCounter and onCompactionError reach every session", async () => {
    const calls: { messages: number; counter: boolean }[] = [];
    const counted: number[] = [];
    const manager = SessionManager.create(new MemoryStore())
      .onCompaction(async (messages, context) => {
        calls.push({ messages: messages.length, counter: typeof context?.tokenCounter === "function" });
        return { fromMessageId: messages[0]!.id, toMessageId: messages[1]!.id, summary: "short summary" };
      })
      .compactAfter(100, {
        tokenCounter: ({ messages }) => {
          counted.push(messages.length);
          return messages.length * 60;
        },
      });
    for (const name of ["a", "b"]) {
      const { id } = await manager.create(name);
      await manager.append(id, long(`${name}1`));
      await manager.append(id, long(`${name}2`));
      assert.equal((await manager.getCompactions(id)).length, 1, `session ${name} compacted`);
      assert.equal((await manager.getHistory(id))[0]?.parts[0]?.text, "short summary");
    }
    assert.deepEqual(
      calls.map((c) => [c.messages, c.counter]),
      [
        [2, true],
        [2, true],
      ],
    );
    assert.ok(counted.length >= 4, "the custom counter decided");
  });

  test("automatic compaction failures go to onCompactionError; the append still succeeds", async () => {
    const errors: unknown[] = [];
    const manager = SessionManager.create(new MemoryStore())
      .onCompaction(async () => {
        throw new Error("summariser down");
      })
      .compactAfter(0)
      .onCompactionError((error) => {
        errors.push(error);
      });
    const { id } = await manager.create("a");
    await manager.append(id, msg("m1"));
    assert.deepEqual(ids(await manager.getHistory(id)), ["m1"]);
    assert.equal((errors[0] as Error | undefined)?.message, "summariser down");
  });
});

describe("SessionManager: session_search", () => {
  test("a model's question in full sentences is answered, not refused for its grammar", async () => {
    const manager = SessionManager.create(new MemoryStore());
    const info = await manager.create("chat");
    await manager.append(info.id, msg("m1", "Caroline went to the LGBTQ support group on Friday"));
    // 36 distinct words, over the limit of 32, but only 10 are searched for: the rest are function words.
    const query =
      "What did Caroline say about when she would be going to the LGBTQ support group that she had been talking " +
      "about with all of her friends before they were there, and why was it so important to her at that time?";
    const answer = await manager.tools().session_search!.execute({ query });
    assert.match(String(answer), /^\[user\] Caroline went to the LGBTQ support group on Friday/);
  });
});

describe("SessionManager: failure handling", () => {
  test("session_search reports a failing store as Error: …", async () => {
    const store = new MemoryStore();
    const manager = SessionManager.create(store);
    store.searchMessages = async () => {
      throw new Error("index offline");
    };
    assert.equal(await manager.tools().session_search!.execute({ query: "x" }), "Error: index offline");
  });

  test("a fork that fails halfway leaves no session behind", async () => {
    const store = new MemoryStore();
    const manager = SessionManager.create(store).withContext("memory");
    const source = await manager.create("source");
    await manager.append(source.id, msg("u1"));
    await manager.getSession(source.id).replaceContextBlock("memory", "facts");
    store.blocks.setBlock = async () => {
      throw new Error("disk full");
    };
    await assert.rejects(manager.fork(source.id, "u1", "fork"), /disk full/);
    assert.deepEqual(ids(await manager.list()), [source.id]);
    assert.deepEqual(store.sessionIds(), [source.id]);
  });

  test("appendAll and fork validate before writing; ids must be non-empty strings", async () => {
    const manager = SessionManager.create(new MemoryStore());
    const { id } = await manager.create("a");
    await rejectsWithCode(manager.append("", msg("m")), "INVALID_ARGUMENT");
    await rejectsWithCode(manager.delete(5 as never), "INVALID_ARGUMENT");
    await rejectsWithIssue(manager.fork(id, "", "x"), {
      code: "INVALID_ARGUMENT",
      path: "atMessageId",
      rule: "format",
    });
    await rejectsWithIssue(manager.appendAll(id, "m" as never), {
      code: "INVALID_ARGUMENT",
      path: "messages",
      rule: "type",
    });
    await rejectsWithIssue(manager.rename(5 as never, "n"), {
      code: "INVALID_ARGUMENT",
      path: "sessionId",
      rule: "type",
    });
    await rejectsWithCode(manager.appendAll(id, [msg("a"), { id: "b" } as never]), "INVALID_MESSAGE");
    assert.deepEqual(await manager.getHistory(id), []);
    // An echoed overlay in a posted transcript is skipped; the chain continues under the message before it.
    assert.equal(await manager.appendAll(id, [msg("a"), msg("compaction_x"), msg("c")]), "c");
    assert.deepEqual(
      (await manager.getHistory(id)).map((m) => m.id),
      ["a", "c"],
    );
  });
});
