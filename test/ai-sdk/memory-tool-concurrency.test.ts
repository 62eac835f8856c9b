// Two concurrent edits of the memory directory never lose one: each change is a conditional write, run again on
// what the other writer stored. Deterministically (a writer forced in between a read and its write) and with real
// concurrent connections: two SQLite connections on one file, two Postgres pools on one schema.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { type MemoryToolCommand, memoryTool } from "../../src/ai-sdk/index.js";
import { type ContextCapableStore, hasConditionalWrite } from "../../src/contract/context.js";
import { MemoryStore, SqliteStore } from "../../src/index.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { dropSchema, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";

const run = (tool: ReturnType<typeof memoryTool>, input: unknown) => tool.execute(input as MemoryToolCommand);

/** `store` whose next conditional writes first let `between` run (another writer's whole command). */
function racing(store: ContextCapableStore, between: () => Promise<unknown>, times = 1) {
  const inner = store.blocks;
  assert.ok(hasConditionalWrite(inner));
  let left = times;
  const blocks = {
    getBlock: (key: string) => inner.getBlock(key),
    setBlock: (key: string, content: string) => inner.setBlock(key, content),
    deleteBlocks: (keys: readonly string[]) => inner.deleteBlocks(keys),
    setBlockIf: async (key: string, expected: string | null, next: string) => {
      if (left-- > 0) await between();
      return inner.setBlockIf(key, expected, next);
    },
  };
  return { blocks, entries: store.entries } as unknown as ContextCapableStore;
}

const dir = mkdtempSync(join(tmpdir(), "memory-tool-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("memoryTool: concurrent edits", () => {
  for (const [name, create] of [
    ["memory", () => new MemoryStore()],
    ["sqlite", () => new SqliteStore(join(dir, `race-${Math.random()}.db`))],
  ] as const) {
    test(`an edit made between another's read and write survives, and so does the other (${name})`, async () => {
      const store = create();
      const other = memoryTool({ store, owner: "o" });
      await run(other, { command: "create", path: "/memories/todo.md", file_text: "first\nlast" });
      const tool = memoryTool({
        store: racing(store, () =>
          run(other, {
            command: "str_replace",
            path: "/memories/todo.md",
            old_str: "first",
            new_str: "FIRST",
          }),
        ),
        owner: "o",
      });
      assert.equal(
        await run(tool, {
          command: "insert",
          path: "/memories/todo.md",
          insert_line: 1,
          insert_text: "middle",
        }),
        "The file /memories/todo.md has been edited.",
      );
      assert.equal((await other.files()).get("/memories/todo.md"), "FIRST\nmiddle\nlast");
      await store.close();
    });

    test(`a command re-run after a conflict answers from what the other writer stored (${name})`, async () => {
      const store = create();
      const other = memoryTool({ store, owner: "o" });
      const tool = memoryTool({
        store: racing(store, () =>
          run(other, { command: "create", path: "/memories/a.md", file_text: "theirs" }),
        ),
        owner: "o",
      });
      assert.equal(
        await run(tool, { command: "create", path: "/memories/a.md", file_text: "mine" }),
        "Error: File /memories/a.md already exists",
      );
      assert.equal((await tool.files()).get("/memories/a.md"), "theirs");
      await store.close();
    });

    test(`retries are bounded: a directory that keeps changing is an error string, nothing written (${name})`, async () => {
      const store = create();
      const other = memoryTool({ store, owner: "o" });
      let n = 0;
      const tool = memoryTool({
        store: racing(
          store,
          () => run(other, { command: "create", path: `/memories/f${n++}`, file_text: "x" }),
          3,
        ),
        owner: "o",
        maxAttempts: 3,
      });
      assert.equal(
        await run(tool, { command: "create", path: "/memories/mine", file_text: "x" }),
        "Error: The memory directory was changed by other writers 3 times while this command ran; nothing was " +
          "written. Run it again",
      );
      assert.deepEqual([...(await tool.files()).keys()].sort(), [
        "/memories/f0",
        "/memories/f1",
        "/memories/f2",
      ]);
      await store.close();
    });
  }

  test("two SQLite connections on one file, many interleaved edits: every one is kept", async () => {
    const path = join(dir, "two-connections.db");
    const a = new SqliteStore(path);
    const b = new SqliteStore(path);
    const toolA = memoryTool({ store: a, owner: "o", maxAttempts: 100 });
    // 40 writers at once: in the worst case one of them wins each round, so each may need 40 attempts.
    const toolB = memoryTool({ store: b, owner: "o", maxAttempts: 100 });
    await run(toolA, { command: "create", path: "/memories/log.md", file_text: "start" });
    const outputs = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        run(i % 2 ? toolA : toolB, {
          command: "insert",
          path: "/memories/log.md",
          insert_line: 1,
          insert_text: `line ${i}`,
        }),
      ),
    );
    assert.ok(
      outputs.every((out) => out === "The file /memories/log.md has been edited."),
      outputs.join("\n"),
    );
    const lines = (await toolA.files()).get("/memories/log.md")?.split("\n") ?? [];
    assert.equal(lines.length, 41);
    assert.deepEqual(lines.slice(1).sort(), Array.from({ length: 40 }, (_, i) => `line ${i}`).sort());
    await a.close();
    await b.close();
  });
});

const unavailable = await postgresUnavailable();
if (unavailable) {
  console.log(`Skipping the memory tool's Postgres concurrency test: ${unavailable}`);
  test("memoryTool on Postgres", { skip: unavailable }, () => undefined);
} else {
  const schema = `agent_session_test_memtool_${process.pid}`;
  test("two Postgres pools on one schema, concurrent edits of one file: every one is kept", async () => {
    const poolA = testPool(4);
    const poolB = testPool(4);
    await dropSchema(poolA, schema);
    try {
      const a = await PostgresStore.open(poolA, { schema });
      const b = await PostgresStore.open(poolB, { schema });
      const toolA = memoryTool({ store: a, sessionId: "s", maxAttempts: 100 });
      const toolB = memoryTool({ store: b, sessionId: "s", maxAttempts: 100 });
      await run(toolA, { command: "create", path: "/memories/log.md", file_text: "start" });
      const outputs = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          run(i % 2 ? toolA : toolB, {
            command: "insert",
            path: "/memories/log.md",
            insert_line: 1,
            insert_text: `line ${i}`,
          }),
        ),
      );
      assert.ok(
        outputs.every((out) => out === "The file /memories/log.md has been edited."),
        outputs.join("\n"),
      );
      const lines = (await toolB.files()).get("/memories/log.md")?.split("\n") ?? [];
      assert.equal(lines.length, 25);
      await a.close();
      await b.close();
    } finally {
      await dropSchema(poolA, schema);
      await poolA.end();
      await poolB.end();
    }
  });
}
