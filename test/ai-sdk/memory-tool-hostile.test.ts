import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type MemoryToolCommand, memoryFilesContext, memoryTool } from "../../src/ai-sdk/index.js";
import { MemoryStore, SessionError } from "../../src/index.js";

const run = (tool: ReturnType<typeof memoryTool>, input: unknown) => tool.execute(input as MemoryToolCommand);

describe("memoryTool: hostile paths", () => {
  const hostile = [
    "/memories/../etc/passwd",
    "/memories/a/../../x",
    "/memories/./a",
    "/memories/..",
    "/memories/%2e%2e/x",
    "/memories/%2E%2e%2Fx",
    "/memories/a%2fb",
    "/memories\\..\\x",
    "/memories/a\\b",
    "/memories/a\u0000b",
    "/memories/a\nb",
    "/memories/a\u0085b",
    "/memories/\ud800",
    "/etc/passwd",
    "/memoriesX/a",
    "memories/a",
    "../memories/a",
    "/memories//a",
    "//memories/a",
    "/memories/ a",
    "/memories/a /b",
    "",
    "C:\\memories\\a",
    "file:///memories/a",
  ];

  test("every hostile path is refused with an error string, for every command, and nothing is written", async () => {
    const store = new MemoryStore();
    const tool = memoryTool({ store, owner: "eve" });
    await run(tool, { command: "create", path: "/memories/real.md", file_text: "real" });
    for (const path of hostile) {
      const inputs = [
        { command: "view", path },
        { command: "create", path, file_text: "x" },
        { command: "str_replace", path, old_str: "real", new_str: "x" },
        { command: "insert", path, insert_line: 0, insert_text: "x" },
        { command: "delete", path },
        { command: "rename", old_path: path, new_path: "/memories/moved.md" },
        { command: "rename", old_path: "/memories/real.md", new_path: path },
      ];
      for (const input of inputs) {
        const out = await run(tool, input);
        assert.match(out, /^Error: The path .* is not allowed: /, `${JSON.stringify(input)} → ${out}`);
      }
    }
    assert.deepEqual([...(await tool.files())], [["/memories/real.md", "real"]]);
    // A refused path is echoed with its invisible characters escaped.
    assert.equal(
      await run(tool, { command: "view", path: "/memories/a\u0000b" }),
      'Error: The path "/memories/a\\u0000b" is not allowed: it contains a control character',
    );
  });

  test("inputs of the wrong shape are error strings, never throws", async () => {
    const tool = memoryTool({ store: new MemoryStore(), owner: "eve" });
    for (const input of [
      null,
      "view /memories",
      [],
      {},
      { command: "format", path: "/memories" },
      { command: "view", path: 42 },
      { command: "view", path: "/memories", view_range: [0, 3] },
      { command: "view", path: "/memories", view_range: [3, 2] },
      { command: "view", path: "/memories", view_range: "1-2" },
      { command: "create", path: "/memories/a" },
      { command: "create", path: "/memories/a", file_text: { toString: () => "x" } },
      { command: "str_replace", path: "/memories/a", new_str: "x" },
      { command: "insert", path: "/memories/a", insert_line: "1", insert_text: "x" },
      { command: "rename", old_path: "/memories/a" },
    ]) {
      assert.match(await run(tool, input), /^Error: /, JSON.stringify(input));
    }
  });
});

describe("memoryTool: limits", () => {
  test("file size, file count, total size and path length are enforced with error strings", async () => {
    const limits = { maxFileBytes: 100, maxFiles: 3, maxTotalBytes: 250, maxPathBytes: 40 };
    const tool = memoryTool({ store: new MemoryStore(), owner: "o", limits });
    assert.equal(
      await run(tool, { command: "create", path: "/memories/big", file_text: "é".repeat(51) }),
      "Error: `file_text` is 102 bytes; a memory file may have at most 100",
    );
    assert.equal(
      await run(tool, { command: "create", path: "/memories/a", file_text: `${"a".repeat(99)}z` }),
      "File created successfully at: /memories/a",
    );
    assert.equal(
      await run(tool, { command: "insert", path: "/memories/a", insert_line: 1, insert_text: "more" }),
      "Error: /memories/a would be 105 bytes; a memory file may have at most 100",
    );
    assert.equal(
      await run(tool, { command: "str_replace", path: "/memories/a", old_str: "z", new_str: "zz" }),
      "Error: /memories/a would be 101 bytes; a memory file may have at most 100",
    );
    await run(tool, { command: "create", path: "/memories/b", file_text: "b".repeat(100) });
    assert.equal(
      await run(tool, { command: "create", path: "/memories/c", file_text: "c".repeat(60) }),
      "Error: The memory directory would hold 260 bytes; at most 250 are allowed. Delete or shorten files first",
    );
    await run(tool, { command: "create", path: "/memories/c", file_text: "c" });
    assert.equal(
      await run(tool, { command: "create", path: "/memories/d", file_text: "d" }),
      "Error: The memory directory may hold at most 3 files; delete or merge some first",
    );
    const long = `/memories/${"x".repeat(31)}`;
    assert.equal(
      await run(tool, { command: "view", path: long }),
      "Error: The path is 41 bytes long; a memory path may have at most 40",
    );
    await run(tool, { command: "create", path: "/memories/dir/f", file_text: "" }).then((out) =>
      assert.equal(out, "Error: The memory directory may hold at most 3 files; delete or merge some first"),
    );
    await run(tool, { command: "delete", path: "/memories/c" });
    await run(tool, { command: "create", path: "/memories/dir/file", file_text: "" });
    assert.equal(
      await run(tool, {
        command: "rename",
        old_path: "/memories/dir",
        new_path: `/memories/${"y".repeat(26)}`,
      }),
      "Error: The rename would make a path of 41 bytes (of /memories/dir/file); a memory path may have at most 40",
    );
    assert.deepEqual([...(await tool.files()).keys()].sort(), [
      "/memories/a",
      "/memories/b",
      "/memories/dir/file",
    ]);
  });

  test("an error never echoes more than a file's worth of the model's input", async () => {
    const tool = memoryTool({ store: new MemoryStore(), owner: "o", limits: { maxFileBytes: 1000 } });
    await run(tool, { command: "create", path: "/memories/a", file_text: "a" });
    const out = await run(tool, {
      command: "str_replace",
      path: "/memories/a",
      old_str: "z".repeat(1_000_000),
      new_str: "",
    });
    assert.equal(out, "Error: `old_str` is 1000000 bytes; a memory file may have at most 1000");
    const path = `/memories/${"p".repeat(1_000_000)}`;
    assert.ok((await run(tool, { command: "view", path })).length < 100);
  });

  test("bad options are INVALID_ARGUMENT (or UNSUPPORTED) with issues, thrown to the app", () => {
    const store = new MemoryStore();
    const refused = (fn: () => unknown, code: string, path: string) =>
      assert.throws(
        fn,
        (e: unknown) => e instanceof SessionError && e.code === code && e.issues?.[0]?.path === path,
      );
    refused(() => memoryTool({ store } as never), "INVALID_ARGUMENT", "owner");
    refused(
      () => memoryTool({ store, owner: "a", sessionId: "b" } as never),
      "INVALID_ARGUMENT",
      "sessionId",
    );
    refused(() => memoryTool({ store, owner: "" }), "INVALID_ARGUMENT", "owner");
    refused(
      () => memoryTool({ store, owner: "a", limits: { maxFiles: 0 } }),
      "INVALID_ARGUMENT",
      "limits.maxFiles",
    );
    refused(
      () => memoryTool({ store, owner: "a", limits: { maxFlies: 3 } as never }),
      "INVALID_ARGUMENT",
      "limits.maxFlies",
    );
    refused(() => memoryTool({ store, owner: "a", maxAttempts: 0 }), "INVALID_ARGUMENT", "maxAttempts");
    // A user-written block store without the conditional write would lose concurrent edits: refused.
    const blocks = store.blocks;
    const legacy = {
      blocks: {
        getBlock: (key: string) => blocks.getBlock(key),
        setBlock: (key: string, content: string) => blocks.setBlock(key, content),
        deleteBlocks: (keys: string[]) => blocks.deleteBlocks(keys),
      },
      entries: store.entries,
    };
    refused(() => memoryTool({ store: legacy as never, owner: "a" }), "UNSUPPORTED", "store");
  });

  test("a stored block that is not a memory directory is reported, not overwritten", async () => {
    const store = new MemoryStore();
    const tool = memoryTool({ store, owner: "o" });
    await store.blocks.setBlock(tool.key, "not json");
    assert.match(
      await run(tool, { command: "create", path: "/memories/a", file_text: "x" }),
      /^Error: The block "_memories_owner_o" does not hold a memory directory/,
    );
    assert.equal(await store.blocks.getBlock(tool.key), "not json");
  });
});

describe("memoryFilesContext", () => {
  test("renders the files numbered, lists those past maxBytes, and nothing for an empty directory", async () => {
    const store = new MemoryStore();
    const tool = memoryTool({ store, owner: "o" });
    const context = memoryFilesContext({ store, owner: "o", maxBytes: 25 });
    assert.equal(await context.get(), null);
    await run(tool, { command: "create", path: "/memories/a.md", file_text: "tea\nSYSTEM [readonly]" });
    await run(tool, { command: "create", path: "/memories/b.md", file_text: "more text" });
    assert.equal(
      await context.get(),
      "/memories/a.md\n     1\ttea\n     2\tSYSTEM [readonly]\n\n" +
        "[1 more file(s) not shown here; read them with the memory tool: /memories/b.md]",
    );
  });
});
