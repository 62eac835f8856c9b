// What MCP writes, MCP can find (issue #92, item 3): search_memory lists the context blocks write_block stored,
// each naming its label and session, within the server's owner scope, bounded in output; the frozen system prompt
// and a search filtered by role or time leave blocks out. On memory, SQLite and PGlite.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { ContextCapableStore } from "../../src/contract/context.js";
import type { FactCapableStore } from "../../src/contract/facts.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import { createMcpServer, type McpServerOptions } from "../../src/mcp/index.js";
import { MemoryStore } from "../../src/memory/store.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { ownedSession } from "../../src/testing/contract/facts-harness.js";
import { tempDir } from "../cli/helpers.js";
import { pgliteSwitchedOff } from "../fixtures/postgres-db.js";
import { randomKeyring } from "../helpers/encryption.js";
import { call } from "./helpers.js";

type Store = ContextCapableStore & RegistryCapableStore & FactCapableStore;

const tmp = tempDir("agent-session-mcp-blocks-");
after(() => tmp.remove());

const BACKENDS: { name: string; skip?: string | false; open(): Store }[] = [
  { name: "memory", open: () => new MemoryStore() },
  { name: "SQLite", open: () => new SqliteStore(tmp.path(`blocks-${process.hrtime.bigint()}.db`)) },
  { name: "PGlite", skip: pgliteSwitchedOff() ?? false, open: () => new PostgresStore(new PGlite()) },
];

async function connect(options: McpServerOptions): Promise<Client> {
  const server = await createMcpServer(options);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "agent-session-test", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

for (const backend of BACKENDS)
  describe(`search_memory finds blocks (${backend.name})`, { skip: backend.skip ?? false }, () => {
    let store: Store;
    let alice: Client;
    let bob: Client;
    let operator: Client;

    before(async () => {
      store = backend.open();
      await ownedSession(store, "a1", "alice", ["hello there"]);
      await ownedSession(store, "b1", "bob", ["hi"]);
      alice = await connect({ store, owner: "alice", writes: true });
      bob = await connect({ store, owner: "bob", writes: true });
      operator = await connect({ store, writes: true });
    });

    after(async () => {
      for (const client of [alice, bob, operator]) await client?.close();
      await store?.close();
    });

    test("write_block, then search_memory finds it, naming the block", async () => {
      const written = await call(alice, "write_block", {
        session: "a1",
        label: "memory",
        content: "The user prefers the dark theme and deploys on Fridays.",
      });
      assert.equal(written.isError, false, written.text);
      const found = await call(alice, "search_memory", { query: "dark theme" });
      assert.equal(found.isError, false, found.text);
      assert.match(
        found.text,
        /^block label="memory" session="a1" characters=55\nThe user prefers the dark theme/m,
      );
      const one = await call(alice, "search_memory", { query: "deploying", session: "a1" });
      assert.match(one.text, /block label="memory" session="a1"/, "word forms match, within one session");
      const all = await call(alice, "search_memory", { query: "dark mountains", match: "all" });
      assert.equal(all.text, "No results found.", "match: all needs every word");
    });

    test("another owner's block is not found; the unscoped server finds every one", async () => {
      await call(bob, "write_block", { session: "b1", label: "notes", content: "Bob keeps a secret zebra." });
      assert.equal((await call(alice, "search_memory", { query: "zebra" })).text, "No results found.");
      assert.match((await call(bob, "search_memory", { query: "zebra" })).text, /label="notes" session="b1"/);
      const both = await call(operator, "search_memory", { query: "zebra dark" });
      assert.match(both.text, /session="a1"/);
      assert.match(both.text, /session="b1"/);
    });

    test("role and time filters leave blocks out; the frozen prompt is never a hit", async () => {
      const filtered = await call(alice, "search_memory", { query: "dark theme", role: "user" });
      assert.equal(filtered.text, "No results found.");
      await store.blocks.setBlock("_system_prompt_a1", "You are a dark theme assistant.", {
        sessionId: "a1",
      });
      const found = await call(alice, "search_memory", { query: "assistant" });
      assert.equal(found.text, "No results found.");
    });

    test("a long block is clipped around the match and the whole output stays bounded", async () => {
      const long = `${"filler words here. ".repeat(1_500)}the needle sits here. ${"more filler. ".repeat(2_000)}`;
      const written = await call(alice, "write_block", { session: "a1", label: "big", content: long });
      assert.equal(written.isError, false, written.text);
      const found = await call(alice, "search_memory", { query: "needle" });
      assert.match(found.text, /block label="big" session="a1"/);
      assert.match(found.text, /needle sits here/);
      assert.match(found.text, /\[hit truncated: characters/);
      assert.ok(found.text.length <= 8_000 + 200, `${found.text.length} of ${long.length} characters`);
    });
  });

test("a sealed block the server cannot open stops the block search with a line saying so; messages still answer", async () => {
  const path = tmp.path(`sealed-${process.hrtime.bigint()}.db`);
  const keyed = new SqliteStore(path, { keyring: randomKeyring(["alice"]) });
  await ownedSession(keyed, "a1", "alice", ["hello there"]);
  await ownedSession(keyed, "p1", null, ["a plain session about zebras"]);
  await keyed.blocks.setBlock("memory_a1", "alice's sealed zebra notes", { sessionId: "a1" });
  await keyed.close();
  const keyless = new SqliteStore(path);
  const client = await connect({ store: keyless });
  try {
    const found = await call(client, "search_memory", { query: "zebras" });
    assert.equal(found.isError, false, found.text);
    assert.match(found.text, /session="p1"/, "the message hit stands");
    assert.match(found.text, /\[blocks: the search stopped at a block this server cannot open: /);
    assert.doesNotMatch(found.text, /sealed zebra notes/);
  } finally {
    await client.close();
    await keyless.close();
  }
});
