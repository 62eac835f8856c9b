// `agent-session mcp` on stdio, spoken to in raw JSON-RPC: a line over the 10 MiB limit, a line that is not JSON
// and a JSON value that is no JSON-RPC message are each answered with a JSON-RPC error, and the server reads on.
// (The SDK's own transport closed itself on such a line: the process ended with exit 13, no answer, no message.)
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, test } from "node:test";
import { leadingId, MAX_STDIO_LINE_BYTES } from "../../src/mcp/line-transport.js";
import { cliArgs, runCli, tempDir } from "../cli/helpers.js";

const tmp = tempDir("agent-session-mcp-limit-");
const db = tmp.path("demo.db");
before(async () => {
  const demo = await runCli(["demo", "--db", db]);
  assert.equal(demo.code, 0, demo.stderr);
});
const children: { kill(): boolean }[] = [];
after(() => {
  for (const child of children) child.kill();
  tmp.remove();
});

test("leadingId reads the top-level id from a prefix, never a nested one", () => {
  assert.equal(leadingId('{"jsonrpc":"2.0","id":7,"method":"x","params":{"q":"…'), 7);
  assert.equal(leadingId('{"jsonrpc":"2.0","params":{"id":9,"q":"a\\"b"},"id":"r-1","method'), "r-1");
  assert.equal(leadingId('{"params":{"id":9,"q":"cut sh'), null);
  assert.equal(leadingId('{"id":12'), null, "a number cut short is no id");
  assert.equal(leadingId('{"method":"x","params":[{"id":3}],"id" : -4 ,'), -4);
});

// A timeout: the SDK's transport left the request unanswered, so without one the old server hangs the test.
test("a line over the limit is answered with an error naming it, and the server goes on", {
  timeout: 120_000,
}, async () => {
  const child = spawn(process.execPath, [...cliArgs(), "mcp", "--db", db], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const answers: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  let buffered = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    for (let at = buffered.indexOf("\n"); at !== -1; at = buffered.indexOf("\n")) {
      answers.push(JSON.parse(buffered.slice(0, at)) as Record<string, unknown>);
      buffered = buffered.slice(at + 1);
      for (const wake of waiters.splice(0)) wake();
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const answer = async (count: number): Promise<Record<string, unknown>> => {
    while (answers.length < count) {
      const woke = new Promise<void>((resolve) => waiters.push(resolve));
      const ended = exited.then((code) => {
        throw new Error(`the server exited (${code}) after ${answers.length} answers: ${stderr}`);
      });
      await Promise.race([woke, ended]);
    }
    return answers[count - 1]!;
  };
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  try {
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    assert.equal((await answer(1)).id, 1);
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const query = "x".repeat(MAX_STDIO_LINE_BYTES + 1024);
    send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "search_memory", arguments: { query } },
    });
    const refused = await answer(2);
    assert.equal(refused.id, 2, "the request's id, read from the head of the line");
    const error = refused.error as { code: number; message: string };
    assert.equal(error.code, -32600);
    assert.match(error.message, new RegExp(`limit of ${MAX_STDIO_LINE_BYTES} bytes`));
    child.stdin.write("this is not json\n");
    assert.deepEqual(((await answer(3)) as { error: { code: number } }).error.code, -32700);
    assert.equal(answers[2]!.id, null);
    send({ jsonrpc: "2.0", id: 3, method: "tools/list" });
    const listed = (await answer(4)) as { id: number; result: { tools: { name: string }[] } };
    assert.equal(listed.id, 3);
    assert.ok(
      listed.result.tools.some((tool) => tool.name === "search_memory"),
      "the server read on",
    );
    assert.match(stderr, /request too large/);
  } finally {
    child.stdin.end();
    assert.equal(await exited, 0, stderr);
  }
});
