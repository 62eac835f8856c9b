// `agent-session mcp` as a client starts it: a child process speaking MCP on stdio, driven by the SDK's own client.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { cliArgs, runCli, tempDir } from "../cli/helpers.js";
import { call } from "./helpers.js";

describe("agent-session mcp over stdio (read-only, unscoped)", () => {
  const tmp = tempDir("agent-session-mcp-");
  const db = tmp.path("demo.db");
  let client: Client;
  let stderr = "";

  before(async () => {
    const demo = await runCli(["demo", "--db", db]);
    assert.equal(demo.code, 0, demo.stderr);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...cliArgs(), "mcp", "--db", db],
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    client = new Client({ name: "agent-session-test", version: "1.0.0" });
    await client.connect(transport);
  });

  after(async () => {
    await client?.close();
    tmp.remove();
  });

  test("lists the read tools only, each marked read-only", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      [
        "search_memory",
        "read_turns_around",
        "read_session",
        "list_sessions",
        "list_facts",
        "list_blocks",
        "read_block",
      ],
    );
    for (const tool of tools) assert.equal(tool.annotations?.readOnlyHint, true, tool.name);
    assert.match(stderr, /read-only/);
  });

  test("write_block is refused as a tool error without --writes", async () => {
    const result = await call(client, "write_block", { session: "demo-deploy", label: "x", content: "y" });
    assert.equal(result.isError, true);
    assert.match(result.text, /^Error: write_block changes the store.*start it with --writes/);
    const unknown = await call(client, "no_such_tool", {});
    assert.equal(unknown.isError, true);
    assert.match(unknown.text, /Tool no_such_tool not found/, "other names keep the SDK's answer");
  });

  test("search, then the turns around the hit, then the session paged", async () => {
    const hits = await call(client, "search_memory", { query: "Which day should we deploy?", limit: 3 });
    assert.equal(hits.isError, false);
    const first = /#1 session="([^"]+)" message="([^"]+)"/.exec(hits.text);
    assert.ok(first, hits.text);
    const around = await call(client, "read_turns_around", {
      session: first[1],
      message: first[2],
      before: 1,
      after: 1,
    });
    assert.match(around.text, new RegExp(`^> \\[\\w+\\] message="${first[2]}"`, "m"));
    const page = await call(client, "read_session", { session: "demo-deploy", limit: 2 });
    assert.match(
      page.text,
      /\[more: messages 1–2 shown; call read_session again with offset: 2 for the next page\]$/,
    );
    const next = await call(client, "read_session", { session: "demo-deploy", offset: 2, limit: 100 });
    assert.match(next.text, /\[end of session: messages 3–\d+ shown\]$/);
  });

  test("the turns after a message follow the newest reply, and say where there were others", async () => {
    const around = await call(client, "read_turns_around", {
      session: "demo-deploy",
      message: "u3",
      before: 0,
      after: 2,
    });
    assert.equal(around.isError, false);
    assert.match(around.text, /^> \[user\] message="u3"/);
    assert.match(around.text, /\[assistant\] message="a3b" \(the newest of 2 replies\)/);
    assert.match(around.text, /\[user\] message="u4" \(the newest of 2 replies\)/);
  });

  test("blocks: the list and one block, the frozen prompt named", async () => {
    const listed = await call(client, "list_blocks", { session: "demo-deploy" });
    assert.match(listed.text, /label="memory"/);
    assert.match(listed.text, /label="_system_prompt" .*\(the frozen system prompt\)/);
    const memory = await call(client, "read_block", { session: "demo-deploy", label: "memory" });
    assert.match(memory.text, /Thursday/);
  });

  test("bad arguments are tool errors, and the server keeps answering", async () => {
    const wrongType = await call(client, "search_memory", { query: 42 });
    assert.equal(wrongType.isError, true);
    assert.match(wrongType.text, /query/);
    const outOfRange = await call(client, "read_session", { session: "demo-deploy", limit: 1000 });
    assert.equal(outOfRange.isError, true);
    assert.match(outOfRange.text, /limit/);
    const badTime = await call(client, "search_memory", { query: "deploy", since: "last tuesday" });
    assert.equal(badTime.isError, true);
    assert.match(badTime.text, /^Error: .*since/);
    const badLeaf = await call(client, "read_session", { session: "demo-deploy", leaf: "nope" });
    assert.deepEqual(badLeaf, {
      text: 'Error: message "nope" is not in session "demo-deploy"',
      isError: true,
    });
    const badLabel = await call(client, "read_block", { session: "demo-deploy", label: "two\nlines" });
    assert.equal(badLabel.isError, true);
    assert.match(badLabel.text, /^Error: A context block label must be a non-empty single line/);
    assert.equal((await call(client, "list_sessions", {})).isError, false);
  });
});
