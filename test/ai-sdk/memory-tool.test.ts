import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type MemoryToolCommand, memoryTool } from "../../src/ai-sdk/index.js";
import { MemoryStore, SqliteStore } from "../../src/index.js";

const run = (tool: ReturnType<typeof memoryTool>, input: unknown) => tool.execute(input as MemoryToolCommand);

for (const [name, create] of [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
] as const) {
  describe(`memoryTool commands (${name})`, () => {
    test("create, view a file, view with a range, view the directory two levels deep", async () => {
      const tool = memoryTool({ store: create(), owner: "alice" });
      assert.equal(
        await run(tool, { command: "view", path: "/memories" }),
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and " +
          "node_modules:\n0B\t/memories",
      );
      assert.equal(
        await run(tool, { command: "create", path: "/memories/notes.md", file_text: "tea\ncoffee\nwater" }),
        "File created successfully at: /memories/notes.md",
      );
      assert.equal(
        await run(tool, { command: "create", path: "/memories/notes.md", file_text: "x" }),
        "Error: File /memories/notes.md already exists",
      );
      await run(tool, {
        command: "create",
        path: "/memories/projects/a/deep.md",
        file_text: "x".repeat(2048),
      });
      await run(tool, { command: "create", path: "/memories/.hidden", file_text: "h" });
      assert.equal(
        await run(tool, { command: "view", path: "/memories/notes.md" }),
        "Here's the content of /memories/notes.md with line numbers:\n     1\ttea\n     2\tcoffee\n     3\twater",
      );
      assert.equal(
        await run(tool, { command: "view", path: "/memories/notes.md", view_range: [2, -1] }),
        "Here's the content of /memories/notes.md with line numbers:\n     2\tcoffee\n     3\twater",
      );
      assert.match(
        await run(tool, { command: "view", path: "/memories/notes.md", view_range: [9, 10] }),
        /^Error: Invalid `view_range` parameter: \[9, 10\]/,
      );
      assert.equal(
        await run(tool, { command: "view", path: "/memories/" }),
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and " +
          "node_modules:\n2.0K\t/memories\n16B\t/memories/notes.md\n2K\t/memories/projects/\n2K\t/memories/projects/a/",
      );
      assert.equal(
        await run(tool, { command: "view", path: "/memories/nope" }),
        "The path /memories/nope does not exist. Please provide a valid path.",
      );
    });

    test("str_replace needs a unique match and shows the edited lines", async () => {
      const tool = memoryTool({ store: create(), sessionId: "s1" });
      await run(tool, { command: "create", path: "/memories/a.md", file_text: "one\ntwo\nthree two\nfour" });
      assert.equal(
        await run(tool, { command: "str_replace", path: "/memories/a.md", old_str: "two", new_str: "2" }),
        "No replacement was performed. Multiple occurrences of old_str `two` in lines: 2, 3. Please ensure it is unique",
      );
      assert.equal(
        await run(tool, { command: "str_replace", path: "/memories/a.md", old_str: "five", new_str: "5" }),
        "No replacement was performed, old_str `five` did not appear verbatim in /memories/a.md.",
      );
      assert.equal(
        await run(tool, {
          command: "str_replace",
          path: "/memories/a.md",
          old_str: "three two",
          new_str: "3\n3b",
        }),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
          "     1\tone\n     2\ttwo\n     3\t3\n     4\t3b\n     5\tfour",
      );
      assert.equal(
        await run(tool, { command: "str_replace", path: "/memories/b.md", old_str: "x", new_str: "y" }),
        "Error: The path /memories/b.md does not exist. Please provide a valid path.",
      );
      assert.equal(
        await run(tool, { command: "str_replace", path: "/memories/a.md", old_str: "", new_str: "y" }),
        "Error: `old_str` must not be empty",
      );
      // Overlapping occurrences are ambiguous too.
      await run(tool, { command: "create", path: "/memories/o.md", file_text: "aaa" });
      assert.match(
        await run(tool, { command: "str_replace", path: "/memories/o.md", old_str: "aa", new_str: "b" }),
        /^No replacement was performed. Multiple occurrences/,
      );
    });

    test("insert at a line, with the documented range error", async () => {
      const tool = memoryTool({ store: create(), owner: "bob" });
      await run(tool, { command: "create", path: "/memories/list.md", file_text: "a\nc" });
      assert.equal(
        await run(tool, { command: "insert", path: "/memories/list.md", insert_line: 1, insert_text: "b\n" }),
        "The file /memories/list.md has been edited.",
      );
      assert.equal(
        await run(tool, { command: "insert", path: "/memories/list.md", insert_line: 0, insert_text: "top" }),
        "The file /memories/list.md has been edited.",
      );
      assert.equal((await tool.files()).get("/memories/list.md"), "top\na\nb\nc");
      assert.equal(
        await run(tool, { command: "insert", path: "/memories/list.md", insert_line: 9, insert_text: "x" }),
        "Error: Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 4]",
      );
      assert.equal(
        await run(tool, { command: "insert", path: "/memories/none.md", insert_line: 0, insert_text: "x" }),
        "Error: The path /memories/none.md does not exist",
      );
      assert.equal(
        await run(tool, { command: "insert", path: "/memories/list.md", insert_line: 1.5, insert_text: "x" }),
        "Error: `insert_line` must be a whole number",
      );
    });

    test("delete a file or a directory; rename a file or a directory", async () => {
      const tool = memoryTool({ store: create(), owner: "carol" });
      await run(tool, { command: "create", path: "/memories/d/one.md", file_text: "1" });
      await run(tool, { command: "create", path: "/memories/d/sub/two.md", file_text: "2" });
      await run(tool, { command: "create", path: "/memories/keep.md", file_text: "k" });
      assert.equal(
        await run(tool, { command: "rename", old_path: "/memories/d", new_path: "/memories/e" }),
        "Successfully renamed /memories/d to /memories/e",
      );
      assert.deepEqual([...(await tool.files()).keys()].sort(), [
        "/memories/e/one.md",
        "/memories/e/sub/two.md",
        "/memories/keep.md",
      ]);
      assert.equal(
        await run(tool, { command: "rename", old_path: "/memories/e/one.md", new_path: "/memories/keep.md" }),
        "Error: The destination /memories/keep.md already exists",
      );
      assert.equal(
        await run(tool, { command: "rename", old_path: "/memories/x", new_path: "/memories/y" }),
        "Error: The path /memories/x does not exist",
      );
      assert.equal(
        await run(tool, { command: "rename", old_path: "/memories/e", new_path: "/memories/e/inner" }),
        "Error: Cannot move /memories/e into itself (/memories/e/inner)",
      );
      assert.equal(
        await run(tool, { command: "create", path: "/memories/keep.md/child", file_text: "x" }),
        "Error: The path /memories/keep.md is a file, not a directory",
      );
      assert.equal(
        await run(tool, { command: "create", path: "/memories/e", file_text: "x" }),
        "Error: File /memories/e already exists",
      );
      assert.equal(
        await run(tool, { command: "delete", path: "/memories/e" }),
        "Successfully deleted /memories/e",
      );
      assert.equal(
        await run(tool, { command: "delete", path: "/memories/e" }),
        "Error: The path /memories/e does not exist",
      );
      assert.equal(
        await run(tool, { command: "delete", path: "/memories" }),
        "Error: Cannot delete the /memories directory itself",
      );
      assert.deepEqual([...(await tool.files()).keys()], ["/memories/keep.md"]);
    });

    test("owners and sessions each have their own directory", async () => {
      const store = create();
      const alice = memoryTool({ store, owner: "alice" });
      const bob = memoryTool({ store, owner: "bob" });
      const session = memoryTool({ store, sessionId: "alice" });
      await run(alice, { command: "create", path: "/memories/secret.md", file_text: "alice's" });
      assert.equal(
        await run(bob, { command: "view", path: "/memories/secret.md" }),
        "The path /memories/secret.md does not exist. Please provide a valid path.",
      );
      assert.equal((await session.files()).size, 0);
      assert.notEqual(alice.key, session.key);
    });
  });
}
