// Ownership of context rows by record, not by key suffix (issue #75): a client-chosen session id equal to another
// owner's id reaches nothing of that owner's blocks through the MCP server or the viewer, and every erasure path
// removes the blocks recorded for a session whatever label wrote them. On memory, SQLite, PGlite and Postgres.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { API_ROUTES } from "../../src/cli/serve/api.js";
import type { ContextCapableStore } from "../../src/contract/context.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import { SessionManager } from "../../src/manager/manager.js";
import type { McpHttpServer } from "../../src/mcp/http.js";
import { startMcpHttp } from "../../src/mcp/index.js";
import { MemoryStore } from "../../src/memory/store.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { tempDir } from "../cli/helpers.js";
import { newPGlite } from "../fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { call, httpClient } from "./helpers.js";

type Store = RegistryCapableStore & ContextCapableStore;

interface Backend {
  name: string;
  skip?: string | false;
  open(): Promise<{ store: Store; dispose(): Promise<void> }>;
}

const tmp = tempDir("agent-session-keys-");
after(() => tmp.remove());
const schema = `mcp_keys_${process.pid}`;
let files = 0;

const BACKENDS: Backend[] = [
  {
    name: "memory",
    async open() {
      const store = new MemoryStore();
      return { store, dispose: () => store.close() };
    },
  },
  {
    name: "SQLite",
    async open() {
      const store = new SqliteStore(tmp.path(`keys-${files++}.db`));
      return { store, dispose: () => store.close() };
    },
  },
  {
    name: "PGlite",
    skip: pgliteSwitchedOff() ?? false,
    async open() {
      const db = await newPGlite();
      const store = await PostgresStore.open(db, { schema });
      return {
        store,
        dispose: async () => {
          await store.close();
          await db.close();
        },
      };
    },
  },
  {
    name: "Postgres",
    skip: (await postgresUnavailable()) ?? false,
    async open() {
      const pool = testPool(2);
      await dropSchema(pool, schema);
      const store = await PostgresStore.open(pool, { schema });
      return {
        store,
        dispose: async () => {
          await store.close();
          await dropSchema(pool, schema);
          await pool.end();
        },
      };
    },
  },
];

const text = (id: string, body: string) => ({
  id,
  role: "user" as const,
  parts: [{ type: "text" as const, text: body }],
});

for (const backend of BACKENDS)
  describe(`context rows belong to a session or an owner by record (${backend.name})`, {
    skip: backend.skip ?? false,
  }, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    let manager: SessionManager;
    let server: McpHttpServer;
    let client: Client;

    before(async () => {
      ({ store, dispose } = await backend.open());
      manager = new SessionManager(store);
      // Bob's per-owner blocks, the pattern MANAGER.md shows: `profile_<owner>` recorded as bob's, and one an app
      // wrote with no record at all.
      await manager.forOwner("bob").create("Bob's chat", { id: "b1" });
      await store.blocks.setBlock("profile_bob", "Bob's medical history.", { owner: "bob" });
      await store.blocks.setBlock("settings_bob", "Bob's unrecorded settings.");
      // Alice opens a chat whose id she chose: "bob".
      await (await manager.forOwner("alice").open("bob")).appendMessage(text("m1", "Alice's question"));
      server = await startMcpHttp({ store, owner: "alice", writes: true });
      client = await httpClient(server.url);
    });

    after(async () => {
      await client?.close();
      await server?.close();
      await dispose?.();
    });

    test("MCP --owner alice lists, reads and writes nothing of bob's blocks through her session named bob", async () => {
      const listed = await call(client, "list_blocks", { session: "bob" });
      assert.doesNotMatch(listed.text, /profile|settings|medical/);
      for (const label of ["profile", "settings"]) {
        assert.deepEqual(await call(client, "read_block", { session: "bob", label }), {
          text: `Error: block "${label}" of session "bob" not found`,
          isError: true,
        });
        const write = await call(client, "write_block", { session: "bob", label, content: "overwritten" });
        assert.equal(write.isError, true, write.text);
      }
      assert.equal(await store.blocks.getBlock("profile_bob"), "Bob's medical history.");
      assert.equal(await store.blocks.getBlock("settings_bob"), "Bob's unrecorded settings.");
      const own = await call(client, "write_block", {
        session: "bob",
        label: "plan",
        content: "Alice's plan.",
      });
      assert.equal(own.isError, false, own.text);
      assert.match(
        (await call(client, "list_blocks", { session: "bob" })).text,
        /^label="plan" characters=13$/,
      );
    });

    test("the viewer's /api/blocks?owner=alice shows her blocks only", async () => {
      const answer = (await API_ROUTES.blocks!(
        store,
        new URLSearchParams({ id: "bob", owner: "alice" }),
      )) as {
        blocks: { label: string }[];
      };
      assert.deepEqual(
        answer.blocks.map((b) => b.label),
        ["plan"],
      );
    });

    test("erase removes the blocks recorded for the session whatever their label, and no owner's block", async () => {
      const receipt = await manager.forOwner("alice").erase("bob");
      assert.equal(receipt.blocks, 1);
      assert.equal(await store.blocks.getBlock("plan_bob"), null, "a label the manager does not know");
      assert.equal(await store.blocks.getBlock("profile_bob"), "Bob's medical history.");
      assert.equal(await store.blocks.getBlock("settings_bob"), "Bob's unrecorded settings.");
    });

    test("a session deleted by one owner leaves nothing the next owner to open its id receives", async () => {
      await (await manager.forOwner("alice").open("chat")).appendMessage(text("c1", "hello"));
      assert.equal(
        (await call(client, "write_block", { session: "chat", label: "scratch", content: "Alice's secret." }))
          .isError,
        false,
      );
      assert.equal(await manager.forOwner("alice").delete("chat"), true);
      assert.equal(await store.blocks.getBlock("scratch_chat"), null);
      await manager.forOwner("carol").open("chat");
      const answer = (await API_ROUTES.blocks!(
        store,
        new URLSearchParams({ id: "chat", owner: "carol" }),
      )) as {
        blocks: { content: string }[];
      };
      assert.deepEqual(answer.blocks, []);
    });

    test("sweep removes an inactive session's recorded blocks whatever their label", async () => {
      await (await manager.forOwner("alice").open("old")).appendMessage(text("o1", "old"));
      await call(client, "write_block", { session: "old", label: "note", content: "kept too long" });
      await store.entries.setEntry("kb", "old-entry", "an entry of the old session", { sessionId: "old" });
      const report = await manager.sweep(
        { maxAgeMs: 1 },
        { now: new Date(Date.now() + 60_000), owner: "alice" },
      );
      assert.ok(report.erased.sessionIds.includes("old"));
      assert.equal(await store.blocks.getBlock("note_old"), null);
      assert.equal(await store.entries.countEntries("kb"), 0);
    });

    test("eraseOwner removes the blocks and entries recorded as the owner's, not the unrecorded ones", async () => {
      await store.entries.setEntry("bob-notes", "n1", "a note of bob's", { owner: "bob" });
      const receipt = await manager.eraseOwner("bob");
      assert.equal(receipt.blocks, 1);
      assert.equal(receipt.entries, 1);
      assert.equal(await store.blocks.getBlock("profile_bob"), null);
      assert.equal(await store.entries.countEntries("bob-notes"), 0);
      assert.equal(await store.blocks.getBlock("settings_bob"), "Bob's unrecorded settings.");
    });

    test("eraseAll of the owner view removes the blocks MCP wrote for its sessions", async () => {
      await (await manager.forOwner("dave").open("d1")).appendMessage(text("d-1", "hi"));
      const dave = await startMcpHttp({ store, owner: "dave", writes: true });
      const daveClient = await httpClient(dave.url);
      try {
        await call(daveClient, "write_block", { session: "d1", label: "todo", content: "dave's todo" });
      } finally {
        await daveClient.close();
        await dave.close();
      }
      const receipt = await manager.forOwner("dave").eraseAll();
      assert.equal(receipt.blocks, 1);
      assert.equal(await store.blocks.getBlock("todo_d1"), null);
    });
  });
