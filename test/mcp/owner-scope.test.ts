// An owner-scoped MCP server over HTTP, driven by the SDK's own client: nothing of another owner is reachable,
// and another owner's session reads exactly as an unknown id does.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ContextCapableStore } from "../../src/contract/context.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import type { McpHttpServer } from "../../src/mcp/http.js";
import { startMcpHttp } from "../../src/mcp/index.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { tempDir } from "../cli/helpers.js";
import { newPGlite } from "../fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { fillOwners } from "./fixture.js";
import { call, httpClient } from "./helpers.js";

type Store = RegistryCapableStore & ContextCapableStore;

/** A fresh store of one backend and how to dispose of it. */
interface Backend {
  name: string;
  skip?: string | false;
  open(): Promise<{ store: Store; dispose(): Promise<void> }>;
}

const tmp = tempDir("agent-session-mcp-");
after(() => tmp.remove());
const schema = `mcp_owner_${process.pid}`;

const BACKENDS: Backend[] = [
  {
    name: "SQLite",
    async open() {
      const store = new SqliteStore(tmp.path("owners.db"));
      return { store, dispose: () => store.close() };
    },
  },
  {
    name: "PGlite",
    skip: pgliteSwitchedOff() ?? false,
    async open() {
      const db = await newPGlite();
      const store = await PostgresStore.open(db, { schema });
      const dispose = async () => {
        await store.close();
        await db.close();
      };
      return { store, dispose };
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

for (const backend of BACKENDS)
  describe(`MCP server scoped to one owner over Streamable HTTP (${backend.name})`, {
    skip: backend.skip ?? false,
  }, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    let server: McpHttpServer;
    let client: Client;

    before(async () => {
      ({ store, dispose } = await backend.open());
      await fillOwners(store);
      server = await startMcpHttp({ store, owner: "alice", writes: true });
      client = await httpClient(server.url);
    });

    after(async () => {
      await client?.close();
      await server?.close();
      await dispose?.();
    });

    test("listens on 127.0.0.1 at /mcp", () => {
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    });

    test("search finds the owner's messages only", async () => {
      const { text, isError } = await call(client, "search_memory", { query: "deploy payments service" });
      assert.equal(isError, false);
      assert.match(text, /session="a" message="a-u1"/);
      assert.doesNotMatch(text, /team_a|b-u1|Monday|loose|unregistered/);
    });

    test("search with the filters: role, time range, branch, a session of the owner", async () => {
      const assistant = await call(client, "search_memory", { query: "deploy", role: "assistant" });
      assert.match(assistant.text, /message="a-a1" role=assistant/);
      assert.doesNotMatch(assistant.text, /role=user/);
      const future = await call(client, "search_memory", { query: "deploy", since: "2999-01-01T00:00:00Z" });
      assert.equal(future.text, "No results found.");
      const inSession = await call(client, "search_memory", {
        query: "Thursday",
        session: "a",
        branch: "active",
      });
      assert.match(inSession.text, /session="a"/);
    });

    test("another owner's session and an unregistered one read exactly as an unknown id", async () => {
      const unknown = await call(client, "read_session", { session: "nobody" });
      assert.deepEqual(unknown, { text: 'Error: session "nobody" not found', isError: true });
      for (const session of ["team_a", "loose"]) {
        for (const [tool, args] of [
          ["read_session", { session }],
          ["read_turns_around", { session, message: "b-u1" }],
          ["search_memory", { query: "deploy", session }],
          ["list_blocks", { session }],
          ["read_block", { session, label: "notes" }],
          ["write_block", { session, label: "notes", content: "overwritten" }],
        ] as const) {
          const result = await call(client, tool, args);
          assert.deepEqual(result, { text: `Error: session "${session}" not found`, isError: true }, tool);
        }
      }
      assert.equal(await store.blocks.getBlock("notes_team_a"), "Bob's secret notes.");
    });

    test("list_sessions lists the owner's sessions only", async () => {
      const { text } = await call(client, "list_sessions", {});
      assert.match(text, /session="a" name="Alice's deploys"/);
      assert.doesNotMatch(text, /team_a|loose/);
    });

    test("a block key another session owns is not reachable through a shorter session id", async () => {
      // notes_team_a is Bob's block "notes" of team_a; Alice's session "a" with label "notes_team" names the same key.
      const read = await call(client, "read_block", { session: "a", label: "notes_team" });
      assert.deepEqual(read, { text: 'Error: block "notes_team" of session "a" not found', isError: true });
      const listed = await call(client, "list_blocks", { session: "a" });
      assert.match(listed.text, /label="memory"/);
      assert.doesNotMatch(listed.text, /notes/);
      const write = await call(client, "write_block", { session: "a", label: "notes_team", content: "x" });
      assert.equal(write.isError, true);
      assert.match(write.text, /^Error: label must not contain "_"/);
      assert.equal(await store.blocks.getBlock("notes_team_a"), "Bob's secret notes.");
    });

    test("writes: write_block stores a block of the owner's session, read back by read_block", async () => {
      const written = await call(client, "write_block", {
        session: "a",
        label: "plan",
        content: "Ship Thursday.",
      });
      assert.equal(written.isError, false, written.text);
      assert.equal(await store.blocks.getBlock("plan_a"), "Ship Thursday.");
      assert.deepEqual(await call(client, "read_block", { session: "a", label: "plan" }), {
        text: "Ship Thursday.",
        isError: false,
      });
    });

    test("a block larger than maxBlockChars is refused whole, nothing written", async () => {
      const big = "x".repeat(64001);
      const result = await call(client, "write_block", { session: "a", label: "huge", content: big });
      assert.equal(result.isError, true);
      assert.match(result.text, /^Error: content is 64001 characters, more than the 64000/);
      assert.equal(await store.blocks.getBlock("huge_a"), null);
    });
  });
