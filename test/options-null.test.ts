// Options arguments: null means "none" as undefined does, anything else that is no object is INVALID_ARGUMENT.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SessionError } from "../src/errors.js";
import { MemoryStore, Session, SessionManager } from "../src/index.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { msg } from "../src/testing/contract/harness.js";

const invalid = (error: unknown) => {
  assert.ok(error instanceof SessionError, String(error));
  assert.equal(error.code, "INVALID_ARGUMENT");
  assert.deepEqual(error.issues, [{ path: "options", rule: "type" }]);
  return true;
};

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe("options arguments", () => {
  test("Session: null options are no options", async () => {
    const store = new MemoryStore();
    const session = Session.create(store)
      .forSession("s")
      .withContext("memory", null)
      .compactAfter(1_000_000, null);
    await session.appendMessage(msg("m1", "hello world"));
    assert.deepEqual(
      (await collect(session.history(null))).map((m) => m.id),
      ["m1"],
    );
    assert.deepEqual(
      (await collect(session.historyBatches(null))).flat().map((m) => m.id),
      ["m1"],
    );
    assert.deepEqual(
      (await session.search("hello", null)).map((hit) => hit.id),
      ["m1"],
    );
    const block = await session.addContext("notes", null);
    assert.equal(block.label, "notes");
  });

  test("Session: options that are no object are refused", async () => {
    const session = Session.create(new MemoryStore()).forSession("s");
    assert.throws(() => Session.create(new MemoryStore()).withContext("memory", 5 as never), invalid);
    assert.throws(() => Session.create(new MemoryStore()).compactAfter(10, "x" as never), invalid);
    await assert.rejects(session.search("hello", 5 as never), invalid);
    await assert.rejects(collect(session.history(true as never)), invalid);
    await assert.rejects(session.addContext("notes", "x" as never), invalid);
  });

  test("SessionManager: null options are no options, others refused", async () => {
    const manager = SessionManager.create(new MemoryStore())
      .withContext("memory", null)
      .compactAfter(10_000, null);
    const info = await manager.create("chat");
    await manager.append(info.id, msg("m1", "hello manager"));
    assert.deepEqual(
      (await manager.search("manager", null)).map((hit) => hit.id),
      ["m1"],
    );
    await assert.rejects(manager.search("manager", 1 as never), invalid);
    await manager.close();
  });

  test("SQLite: null connection settings are the defaults", async () => {
    const store = new SqliteStore(":memory:", { busyTimeoutMs: null as never, pageCacheMiB: null as never });
    await store.session("s").appendMessage(msg("m1"));
    await store.close();
  });

  test("SQLite: text stored outside messages keeps a leading U+FEFF", async () => {
    const store = new SqliteStore(":memory:");
    const session = store.session("s");
    await session.appendMessage(msg("m1"));
    const stored = await session.addCompaction("\uFEFFsummary", "m1", "m1");
    assert.equal((await session.getCompactions())[0]?.summary, "\uFEFFsummary");
    assert.equal(stored.summary, "\uFEFFsummary");
    await store.blocks.setBlock("memory_s", "\uFEFFcontent");
    assert.equal(await store.blocks.getBlock("memory_s"), "\uFEFFcontent");
    await store.close();
  });
});
