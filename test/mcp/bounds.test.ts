// What the MCP server returns stays within its limits, with a marker that says how to read on; its options are
// checked when it is made; a request addressed to another host name is refused.
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SessionManager } from "../../src/manager/manager.js";
import type { McpHttpServer } from "../../src/mcp/http.js";
import { createMcpServer, startMcpHttp } from "../../src/mcp/index.js";
import { MemoryStore } from "../../src/memory/store.js";
import { call, httpClient } from "./helpers.js";

const LIMITS = { maxHitChars: 600, maxOutputChars: 2000 };

describe("MCP outputs are bounded (a manager over a memory store)", () => {
  const store = new MemoryStore();
  const manager = new SessionManager(store);
  let server: McpHttpServer;
  let client: Client;

  before(async () => {
    await manager.create("Long", { id: "long" });
    for (let i = 0; i < 30; i++) {
      const text = `Message ${i} about the deploy. ${"padding words ".repeat(1500)}`;
      await manager.append("long", {
        id: `m${i}`,
        role: i % 2 ? "assistant" : "user",
        parts: [{ type: "text", text }],
      });
    }
    for (let i = 0; i < 150; i++) await manager.create(`Session ${i}`, { id: `s${i}` });
    server = await startMcpHttp({ manager, limits: LIMITS });
    client = await httpClient(server.url);
  });

  after(async () => {
    await client?.close();
    await server?.close();
    await manager.close();
  });

  test("search: each hit and the whole result within the limits, the rest counted", async () => {
    const { text, isError } = await call(client, "search_memory", { query: "deploy", limit: 50 });
    assert.equal(isError, false);
    assert.ok(text.length <= LIMITS.maxOutputChars, `${text.length} characters`);
    assert.match(text, /\[hit truncated: characters/);
    assert.match(text, /\[output truncated: \d+ of 30 results shown/);
  });

  test("read_session: whole messages while they fit, then the offset to go on from", async () => {
    const { text } = await call(client, "read_session", { session: "long", limit: 100 });
    assert.ok(text.length <= LIMITS.maxOutputChars, `${text.length} characters`);
    const more = /\[more: messages 1–(\d+) shown; call read_session again with offset: (\d+)/.exec(text);
    assert.ok(more, text.slice(-300));
    assert.equal(more[1], more[2]);
    const next = await call(client, "read_session", { session: "long", offset: Number(more[2]), limit: 1 });
    assert.match(next.text, new RegExp(`message="m${more[2]}"`));
  });

  test("read_turns_around and list_sessions stay within the limit too", async () => {
    const around = await call(client, "read_turns_around", {
      session: "long",
      message: "m15",
      before: 10,
      after: 10,
    });
    assert.ok(around.text.length <= LIMITS.maxOutputChars);
    assert.match(around.text, /\[output truncated: \d+ of 21 turns shown\]/);
    const list = await call(client, "list_sessions", { limit: 100 });
    assert.ok(list.text.length <= LIMITS.maxOutputChars);
    assert.match(
      list.text,
      /\[more: sessions 1–\d+ shown; call list_sessions with offset: \d+ for the next\]$/,
    );
  });

  test("a block longer than the output limit comes in parts", async () => {
    await store.blocks.setBlock("memory_long", "fact. ".repeat(1000), { sessionId: "long" });
    const first = await call(client, "read_block", { session: "long", label: "memory" });
    assert.ok(first.text.length <= LIMITS.maxOutputChars);
    const offset = /load it again with offset: (\d+)/.exec(first.text);
    assert.ok(offset, first.text.slice(-200));
    const second = await call(client, "read_block", {
      session: "long",
      label: "memory",
      offset: Number(offset[1]),
    });
    assert.match(second.text, /^fact\./);
  });

  test("a request addressed to another host name is refused (DNS rebinding)", async () => {
    const { port } = new URL(server.url);
    const status = await new Promise<number>((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
      const req = request(
        {
          host: "127.0.0.1",
          port,
          path: "/mcp",
          method: "POST",
          headers: {
            host: `evil.example:${port}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
    assert.equal(status, 403);
  });
});

describe("createMcpServer options", () => {
  test("refusals name the option", async () => {
    const store = new MemoryStore();
    await assert.rejects(createMcpServer({}), {
      code: "INVALID_ARGUMENT",
      issues: [{ path: "store", rule: "required" }],
    });
    await assert.rejects(createMcpServer({ store, manager: new SessionManager(store) }), {
      code: "INVALID_ARGUMENT",
    });
    await assert.rejects(createMcpServer({ store, owner: "" }), { code: "INVALID_ARGUMENT" });
    await assert.rejects(createMcpServer({ store, limits: { maxOutputChars: 10 } }), {
      code: "INVALID_ARGUMENT",
    });
    await assert.rejects(createMcpServer({ store, limits: { maxBlockChars: 0 } }), {
      code: "INVALID_ARGUMENT",
      issues: [{ path: "limits.maxBlockChars", rule: "range" }],
    });
    const server = await createMcpServer({ store });
    await server.close();
  });
});
