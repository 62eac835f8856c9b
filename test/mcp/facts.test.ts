// The MCP server's fact tools (docs/MCP.md, "Facts"): list_facts and forget_fact reach the server's owner's facts
// only, a list is bounded with a marker counting the rest, forget_fact invalidates (history kept) and is offered
// only with writes, delete_fact removes a fact's text (forget_fact says it keeps it), search_memory returns fact
// hits when asked; every refusal is an `Error: …` text.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { FactCapableStore } from "../../src/contract/facts.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import { createMcpServer, type McpServerOptions } from "../../src/mcp/index.js";
import { MemoryStore } from "../../src/memory/store.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { fact, ownedSession } from "../../src/testing/contract/facts-harness.js";
import { tempDir } from "../cli/helpers.js";
import { pgliteSwitchedOff } from "../fixtures/postgres-db.js";
import { call } from "./helpers.js";

type Store = FactCapableStore & RegistryCapableStore;

const tmp = tempDir("agent-session-mcp-facts-");
after(() => tmp.remove());

const BACKENDS: { name: string; skip?: string | false; open(): Store }[] = [
  { name: "memory", open: () => new MemoryStore() },
  { name: "SQLite", open: () => new SqliteStore(tmp.path(`facts-${process.hrtime.bigint()}.db`)) },
  { name: "PGlite", skip: pgliteSwitchedOff() ?? false, open: () => new PostgresStore(new PGlite()) },
];

/** A client connected in-process to a server made with `options`. */
async function connect(options: McpServerOptions): Promise<Client> {
  const server = await createMcpServer(options);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "agent-session-test", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

/** Alice (a1, a2) and Bob (b1) with facts each, one kept to session a2, and an unowned session u1 with its own. */
async function fill(store: Store): Promise<void> {
  await ownedSession(store, "a1", "alice", ["I live in Lyon", "I like green tea"]);
  await ownedSession(store, "a2", "alice", ["I play chess"]);
  await ownedSession(store, "b1", "bob", ["I live in Oslo"]);
  await ownedSession(store, "u1", null, ["I have no owner"]);
  await store.facts.add({ owner: "alice" }, [
    fact("Alice lives in Lyon.", [["a1", "a1-0"]], { id: "lyon", about: "Alice" }),
    fact("Alice likes green tea.", [["a1", "a1-1"]], { id: "tea" }),
  ]);
  await store.facts.add({ owner: "bob" }, [
    fact("Bob lives in Oslo.", [["b1", "b1-0"]], { id: "oslo" }),
    fact("Bob likes green tea too.", [["b1", "b1-0"]], { id: "bob-tea" }),
  ]);
  await store.facts.add({ sessionId: "a2" }, [fact("Alice plays chess.", [["a2", "a2-0"]], { id: "chess" })]);
  await store.facts.add({ sessionId: "u1" }, [fact("Nobody owns this.", [["u1", "u1-0"]], { id: "loose" })]);
}

for (const backend of BACKENDS)
  describe(`MCP fact tools (${backend.name})`, { skip: backend.skip ?? false }, () => {
    let store: Store;
    let alice: Client;
    let aliceWrites: Client;
    let bob: Client;
    let operator: Client;

    before(async () => {
      store = backend.open();
      await fill(store);
      alice = await connect({ store, owner: "alice" });
      aliceWrites = await connect({ store, owner: "alice", writes: true });
      bob = await connect({ store, owner: "bob", writes: true });
      operator = await connect({ store });
    });

    after(async () => {
      for (const client of [alice, aliceWrites, bob, operator]) await client?.close();
      await store?.close();
    });

    test("list_facts: the server's owner's current facts with their sources, never another owner's", async () => {
      const { text, isError } = await call(alice, "list_facts", {});
      assert.equal(isError, false, text);
      assert.match(text, /fact="lyon" status=current about="Alice"/);
      assert.match(text, /Alice lives in Lyon\.\n {2}sources: session="a1" message="a1-0"/);
      assert.match(text, /Alice likes green tea\./);
      assert.doesNotMatch(text, /Bob|Oslo|chess|Nobody/);
      const bobs = await call(bob, "list_facts", {});
      assert.match(bobs.text, /Bob lives in Oslo/);
      assert.doesNotMatch(bobs.text, /Alice/);
    });

    test("an owner-scoped server reaches no other scope: another owner, its session, an unowned one", async () => {
      const other = await call(alice, "list_facts", { owner: "bob" });
      assert.equal(other.isError, true);
      assert.match(other.text, /^Error: this server serves the facts of one owner only/);
      assert.doesNotMatch(other.text, /Oslo/);
      for (const session of ["b1", "u1", "nope"]) {
        const result = await call(alice, "list_facts", { session });
        assert.equal(result.isError, true, session);
        assert.equal(result.text, `Error: session "${session}" not found`, "as an unknown id");
      }
      const own = await call(alice, "list_facts", { session: "a2" });
      assert.match(own.text, /Alice plays chess\./, "a session's own facts, of the owner's session");
      const same = await call(alice, "list_facts", { owner: "alice" });
      assert.match(same.text, /Alice lives in Lyon/);
    });

    test("forget_fact: another owner's fact is not found and stays current", async () => {
      const result = await call(aliceWrites, "forget_fact", { fact: "oslo" });
      assert.equal(result.isError, true);
      assert.equal(result.text, 'Error: fact "oslo" of owner "alice" not found');
      assert.equal((await store.facts.get({ owner: "bob" }, "oslo"))?.status, "current");
      const viaSession = await call(aliceWrites, "forget_fact", { fact: "loose", session: "u1" });
      assert.equal(viaSession.text, 'Error: session "u1" not found');
      assert.equal((await store.facts.get({ sessionId: "u1" }, "loose"))?.status, "current");
    });

    test("forget_fact: only with writes; invalidates, keeps the history, refuses a fact not current", async () => {
      const off = await call(alice, "forget_fact", { fact: "tea" });
      assert.equal(off.isError, true);
      assert.match(off.text, /^Error: forget_fact changes the store.*--writes/);
      const names = (await alice.listTools()).tools.map((tool) => tool.name);
      assert.ok(names.includes("list_facts") && !names.includes("forget_fact"), names.join());

      const done = await call(bob, "forget_fact", { fact: "bob-tea" });
      assert.equal(done.isError, false, done.text);
      assert.match(done.text, /^Forgot fact "bob-tea" of owner "bob": it is invalidated/);
      assert.doesNotMatch((await call(bob, "list_facts", {})).text, /green tea/);
      const history = await call(bob, "list_facts", { status: ["invalidated"] });
      assert.match(history.text, /fact="bob-tea" status=invalidated/);
      const again = await call(bob, "forget_fact", { fact: "bob-tea" });
      assert.equal(again.isError, true);
      assert.match(again.text, /^Error: fact "bob-tea" of owner "bob" is invalidated, not current/);
      assert.equal(
        (await store.facts.get({ owner: "alice" }, "tea"))?.status,
        "current",
        "Alice's untouched",
      );
    });

    test("an unscoped server names the owner or session; bad arguments are Error texts", async () => {
      const none = await call(operator, "list_facts", {});
      assert.equal(none.isError, true);
      assert.match(none.text, /^Error: this server serves every owner: name an owner/);
      assert.match((await call(operator, "list_facts", { owner: "bob" })).text, /Bob lives in Oslo/);
      assert.match((await call(operator, "list_facts", { session: "u1" })).text, /Nobody owns this/);
      const both = await call(operator, "list_facts", { owner: "bob", session: "u1" });
      assert.match(both.text, /^Error: name a session or an owner, not both/);
      const cursor = await call(operator, "list_facts", { owner: "bob", cursor: "not-a-cursor" });
      assert.equal(cursor.isError, true);
      assert.match(cursor.text, /^Error: /);
      const empty = await call(operator, "list_facts", { owner: "carol" });
      assert.equal(empty.text, 'No current facts of owner "carol".');
    });

    test("search_memory: facts lift their turns; facts: true lists those in scope, never another owner's", async () => {
      const plain = await call(alice, "search_memory", { query: "green tea" });
      assert.doesNotMatch(plain.text, /fact=/, "turns only by default");
      const withFacts = await call(alice, "search_memory", { query: "green tea", facts: true });
      assert.equal(withFacts.isError, false, withFacts.text);
      assert.match(withFacts.text, /#\d+ fact="tea" observed=/);
      assert.match(withFacts.text, /sources: session="a1" message="a1-1"/);
      assert.doesNotMatch(withFacts.text, /Bob|bob-tea/);
    });

    test("list_facts is bounded: a page, the count of the facts past it and the cursor that reads them", async () => {
      await ownedSession(store, "many", "dana", ["I say many things"]);
      for (let batch = 0; batch < 3; batch++) {
        const facts = Array.from({ length: 50 }, (_, i) =>
          fact(`Fact number ${batch * 50 + i}. ${"padding ".repeat(40)}`, [["many", "many-0"]]),
        );
        await store.facts.add({ owner: "dana" }, facts);
      }
      const client = await connect({ store, owner: "dana", limits: { maxOutputChars: 4000 } });
      const first = await call(client, "list_facts", { limit: 100 });
      assert.ok(first.text.length <= 4000, `${first.text.length} characters`);
      const marker =
        /\[(\d+) more current facts of owner "dana": call list_facts with cursor: ("[^"]+") for the next\]$/.exec(
          first.text,
        );
      assert.ok(marker, first.text.slice(-300));
      const shown = (first.text.match(/^fact=/gm) ?? []).length;
      assert.ok(shown > 0 && shown < 100, `${shown} shown`);
      assert.equal(Number(marker[1]), 150 - shown, "every fact past the shown ones is counted");
      const next = await call(client, "list_facts", { limit: 1, cursor: JSON.parse(marker[2]!) as string });
      const seen = new Set(first.text.match(/Fact number \d+/g));
      const following = /Fact number \d+/.exec(next.text)?.[0];
      assert.ok(following && !seen.has(following), "the cursor goes on after the last fact shown");
      assert.match(next.text, new RegExp(`\\[${150 - shown - 1} more current facts`));
      await client.close();
    });

    test("forget_fact says it keeps the text; delete_fact removes it, only with writes, in scope", async () => {
      const tools = (await aliceWrites.listTools()).tools;
      const forget = tools.find((tool) => tool.name === "forget_fact");
      assert.match(forget?.description ?? "", /not deleted: its text stays stored.*delete_fact/);
      assert.ok(!(await alice.listTools()).tools.some((tool) => tool.name === "delete_fact"), "writes only");
      const off = await call(alice, "delete_fact", { fact: "lyon" });
      assert.match(off.text, /^Error: delete_fact changes the store.*--writes/);
      const other = await call(aliceWrites, "delete_fact", { fact: "oslo" });
      assert.equal(other.text, 'Error: fact "oslo" of owner "alice" not found');
      assert.equal((await store.facts.get({ owner: "bob" }, "oslo"))?.status, "current", "Bob's untouched");
      // An invalidated fact (forget_fact kept its text) is deleted too, text and all.
      assert.equal((await store.facts.get({ owner: "bob" }, "bob-tea"))?.status, "invalidated");
      const done = await call(bob, "delete_fact", { fact: "bob-tea" });
      assert.equal(done.text, 'Deleted fact "bob-tea" of owner "bob": its text is no longer stored.');
      assert.equal(await store.facts.get({ owner: "bob" }, "bob-tea"), null);
      const history = await call(bob, "list_facts", { status: ["invalidated"] });
      assert.doesNotMatch(history.text, /green tea/);
    });
  });
