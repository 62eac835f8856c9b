// `agent-session mcp --http 0 --writes`: the CLI's HTTP mode, reached by the SDK's client, stopped by SIGTERM.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { cliArgs, runCli, tempDir } from "../cli/helpers.js";
import { call, httpClient } from "./helpers.js";

describe("agent-session mcp --http (with --writes)", () => {
  const tmp = tempDir("agent-session-mcp-");
  const db = tmp.path("demo.db");
  let child: ReturnType<typeof spawn>;
  let exited: Promise<number | null>;
  let url: string;
  let client: Client;

  before(async () => {
    const demo = await runCli(["demo", "--db", db]);
    assert.equal(demo.code, 0, demo.stderr);
    child = spawn(process.execPath, [...cliArgs(), "mcp", "--db", db, "--http", "0", "--writes", "--json"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    exited = once(child, "exit").then(([code]) => code as number | null);
    url = await new Promise<string>((resolve, reject) => {
      let buffered = "";
      child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
        buffered += chunk;
        if (buffered.includes("\n")) resolve((JSON.parse(buffered.split("\n")[0]!) as { url: string }).url);
      });
      void exited.then((code) => reject(new Error(`mcp exited with ${code}: ${stderr}`)));
    });
    client = await httpClient(url);
  });

  after(async () => {
    await client?.close();
    if (child?.exitCode === null) child.kill("SIGTERM");
    const code = await exited;
    tmp.remove();
    assert.equal(code, 0, "mcp exits cleanly on SIGTERM");
  });

  test("prints its URL on 127.0.0.1 and offers write_block", async () => {
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const { tools } = await client.listTools();
    const write = tools.find((tool) => tool.name === "write_block");
    assert.equal(write?.annotations?.readOnlyHint, false);
  });

  test("write_block stores the block in the database", async () => {
    const result = await call(client, "write_block", {
      session: "demo-trip",
      label: "plan",
      content: "Fly Tuesday.",
    });
    assert.equal(result.isError, false, result.text);
    const store = new SqliteStore(db);
    try {
      assert.equal(await store.blocks.getBlock("plan_demo-trip"), "Fly Tuesday.");
    } finally {
      await store.close();
    }
  });
});
