// Recall with facts through the doors above the store (docs/FACTS.md#recall): Session.search takes `facts: "hits"`
// as the store does, and one owner's facts never reach another's search through the manager, the owner view, the
// model's session_search or MCP's search_memory. What the stores answer is the contract's (facts-recall.spec.ts).

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { SearchItem } from "../../src/contract/search.js";
import { SessionManager } from "../../src/manager/manager.js";
import { startMcpHttp } from "../../src/mcp/index.js";
import { MemoryStore } from "../../src/memory/store.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { Session } from "../../src/session/session.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { pgliteUnlessSwitchedOff } from "../fixtures/postgres-db.js";
import { call, httpClient } from "../mcp/helpers.js";

const text = (id: string, role: "user" | "assistant", body: string) => ({
  id,
  role,
  parts: [{ type: "text" as const, text: body }],
});

const fact = (sessionId: string, messageIds: string[], body: string, about = "Dana") => ({
  text: body,
  about,
  observedAt: Date.now(),
  sources: messageIds.map((messageId) => ({ sessionId, messageId })),
  producer: "recorded:test",
});

const ids = (items: readonly SearchItem[]) =>
  items.map((item) => ("kind" in item ? `fact:${item.text}` : item.id));

/** Dana's chat: the turn that says what she does never names her profession; a fact derived from it does. */
async function danaStore(make: () => Promise<Store>): Promise<Store> {
  const store = await make();
  const session = store.session("dana");
  await session.appendMessage(text("u1", "user", "I started somewhere new last week."));
  await session.appendMessage(text("a1", "assistant", "Congratulations! What do you do there?"));
  await session.appendMessage(text("u2", "user", "I teach chemistry at the high school downtown."));
  await session.appendMessage(text("a2", "assistant", "A profession of patience, they say."));
  await session.appendMessage(text("u3", "user", "My sister thinks every profession is a calling."));
  return store;
}

type Store = MemoryStore | SqliteStore | PostgresStore;

// One PGlite instance for the file (creating one costs seconds), a schema per store.
const pglite = await pgliteUnlessSwitchedOff();
after(() => pglite?.close());
let schemas = 0;

const BACKENDS: [string, () => Promise<Store>][] = [
  ["memory", async () => new MemoryStore()],
  ["SQLite", async () => new SqliteStore(":memory:")],
  ...(pglite
    ? [
        ["PGlite", () => PostgresStore.open(pglite, { schema: `facts_recall_${++schemas}` })] as [
          string,
          () => Promise<Store>,
        ],
      ]
    : []),
];

for (const [backend, make] of BACKENDS)
  describe(`recall with facts (${backend})`, () => {
    test('Session.search takes facts: "hits" as the store does', async () => {
      const store = await danaStore(make);
      await store.facts.add({ sessionId: "dana" }, [
        fact("dana", ["u1", "u2"], "Dana's profession: chemistry teacher."),
      ]);
      const items = await store.searchMessages("What is Dana's profession?", {
        sessionId: "dana",
        facts: "hits",
      });
      assert.ok(items.some((item) => "kind" in item));
      const session = Session.create(store).forSession("dana");
      const viaSession = await session.search("What is Dana's profession?", { facts: "hits" });
      assert.deepEqual(viaSession, items);
    });

    test("the store-wide 'any fact?' read runs until a fact is found, then no more; facts gone find nothing", async () => {
      const store = await danaStore(make);
      let asked = 0;
      const isEmpty = store.facts.isEmpty.bind(store.facts);
      store.facts.isEmpty = () => {
        asked++;
        return isEmpty();
      };
      const question = "What is Dana's profession?";
      const search = () => store.searchMessages(question, { sessionId: "dana", facts: "hits" });
      assert.ok((await search()).every((item) => !("kind" in item)));
      assert.equal(asked, 1, "a store without facts: asked each search");
      await store.facts.add({ sessionId: "dana" }, [
        fact("dana", ["u2"], "Dana's profession: chemistry teacher."),
      ]);
      assert.ok((await search()).some((item) => "kind" in item));
      assert.ok((await search()).some((item) => "kind" in item));
      assert.equal(asked, 2, "asked once more, then remembered");
      await store.session("dana").deleteMessages(["u2"]);
      assert.ok(
        (await search()).every((item) => !("kind" in item)),
        "the fact went with its source",
      );
      await store.close();
    });

    test("one owner's facts never lift or appear in another's search, through every door", async () => {
      const store = await make();
      const manager = SessionManager.create(store);
      await manager.forOwner("alice").create("Alice", { id: "alice-1" });
      await manager.forOwner("bob").create("Bob", { id: "bob-1" });
      await manager.append("alice-1", text("a1", "user", "I keep my notes in a blue binder."));
      await manager.append("bob-1", text("b1", "user", "The numbers are four seven one one."));
      await store.facts.add({ owner: "bob" }, [fact("bob-1", ["b1"], "Bob's vault code is 4711.", "Bob")]);
      await store.facts.add({ owner: "alice" }, [
        fact("alice-1", ["a1"], "Alice's vault code is kept in a binder.", "Alice"),
      ]);
      const question = "What is the vault code?";
      const alice = await manager.forOwner("alice").search(question, { facts: "hits" });
      assert.deepEqual(ids(alice), ["a1", "fact:Alice's vault code is kept in a binder."]);
      // A session's search reads its owner's facts, restricted to its own sessions.
      const inSession = await manager.search(question, { sessionId: "alice-1", facts: "hits" });
      assert.deepEqual(ids(inSession), ids(alice));
      // Bob's fact lifts Bob's turn in Bob's search only.
      assert.deepEqual(ids(await manager.forOwner("bob").search(question)), ["b1"]);
      // The model's tools: the owner view's session_search and the manager's, each finding only its owner's turn.
      const tool = await manager.forOwner("alice").tools().session_search!.execute({ query: question });
      assert.match(String(tool), /blue binder/);
      assert.doesNotMatch(String(tool), /four seven/);
      // A search naming both owners' sessions for alice keeps to alice's.
      const named = await manager.forOwner("alice").search(question, { sessionIds: ["alice-1", "bob-1"] });
      assert.deepEqual(ids(named), ["a1"]);
      // MCP's search_memory, scoped to alice.
      const server = await startMcpHttp({ store, owner: "alice" });
      const client = await httpClient(server.url);
      try {
        const { text: found } = await call(client, "search_memory", { query: question });
        assert.match(found, /message="a1"/);
        assert.doesNotMatch(found, /b1|four seven|4711/);
      } finally {
        await client.close();
        await server.close();
      }
    });
  });
