import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  PostgresContextProvider,
  PostgresSearchProvider,
  PostgresSessionProvider,
  PostgresStore,
} from "../src/postgres/index.js";
import { POSTGRES_SCHEMA_VERSION, tableNames } from "../src/postgres/schema.js";
import { ids, msg } from "./contract/harness.js";
import { runProviderContract } from "./contract/index.js";
import {
  checkTree,
  dropSchema,
  PG_URL,
  postgresUnavailable,
  testClient,
  testPool,
  truncateAll,
} from "./fixtures/postgres-db.js";

const SCHEMA = "agent_session_test_main";
const unavailable = await postgresUnavailable();

if (unavailable) {
  console.log(`Skipping the Postgres tests: ${unavailable}`);
  test("postgres", { skip: unavailable }, () => undefined);
} else {
  const pool = testPool();
  const options = { schema: SCHEMA };
  const t = tableNames(options);
  await dropSchema(pool, SCHEMA);
  await PostgresStore.open(pool, options);
  after(async () => {
    await dropSchema(pool, SCHEMA);
    await pool.end();
  });

  runProviderContract({
    name: "postgres (pg Pool)",
    create: async () => {
      await truncateAll(pool, t);
      return new PostgresStore(pool, options);
    },
    reopen: async (store) => {
      await store.close();
      return PostgresStore.open(pool, options);
    },
  });

  describe("postgres: schema", () => {
    test("migration run concurrently from several connections creates the tables once", async () => {
      const schema = "agent_session_test_migrate";
      await dropSchema(pool, schema);
      const clients = Array.from({ length: 6 }, () => testClient());
      try {
        await Promise.all(clients.map((c) => c.connect()));
        const stores = await Promise.all(
          clients.map((c) => PostgresStore.open(c, { schema, tablePrefix: "x_" })),
        );
        const names = tableNames({ schema, tablePrefix: "x_" });
        const { rows } = await pool.query(`SELECT id, version FROM ${names.version}`);
        assert.deepEqual(rows, [{ id: 1, version: POSTGRES_SCHEMA_VERSION }]);
        // Every store works on the shared tables, and opening again is a no-op.
        await Promise.all(stores.map((s, i) => s.session("m").appendMessage(msg(`m${i}`))));
        assert.equal(await stores[0]!.session("m").getPathLength(), 6);
        await PostgresStore.open(clients[0]!, { schema, tablePrefix: "x_" });
      } finally {
        await Promise.all(clients.map((c) => c.end()));
        await dropSchema(pool, schema);
      }
    });

    test("bad table options are INVALID_ARGUMENT; a bad source too", () => {
      assert.throws(() => new PostgresStore(pool, { schema: 'x"; DROP' }), { code: "INVALID_ARGUMENT" });
      assert.throws(() => new PostgresStore(pool, { tablePrefix: "a-b" }), { code: "INVALID_ARGUMENT" });
      assert.throws(() => new PostgresStore(42 as never), { code: "INVALID_ARGUMENT" });
    });

    test("a closed store refuses work with CLOSED", async () => {
      const store = await PostgresStore.open(pool, options);
      await store.close();
      await assert.rejects(store.session("a").getHistory(), { code: "CLOSED" });
    });

    test("an unreachable server is a STORAGE error", async () => {
      const store = new PostgresStore("postgres://postgres@127.0.0.1:1/test");
      await assert.rejects(store.session("a").getHistory(), { code: "STORAGE" });
      await store.close();
    });
  });

  describe("postgres: tree maintenance", () => {
    test("deleting many messages at once (nested splices) keeps depths, skip pointers and totals exact", async () => {
      await truncateAll(pool, t);
      const s = new PostgresStore(pool, options).session("splice");
      for (let i = 0; i < 300; i++) await s.appendMessage(msg(`m${i}`, "x".repeat(i % 17)));
      for (let i = 0; i < 30; i++) await s.appendMessage(msg(`b${i}`), `m${i * 9}`);
      await s.appendMessage(msg("tip"), "m299");
      const doomed = Array.from({ length: 300 }, (_, i) => `m${i}`).filter(
        (_, i) => i % 7 === 3 || i % 11 === 0,
      );
      await s.deleteMessages([...doomed, "b4"]);
      const rows = await checkTree(pool, t, "splice");
      assert.equal(rows.size, 331 - doomed.length - 1);
      assert.equal(await s.getPathLength(), 300 - doomed.filter((id) => id !== "tip").length + 1);
      await s.updateMessage(msg("m1", "now much longer ".repeat(10)));
      await s.deleteMessages(["tip"]);
      await checkTree(pool, t, "splice");
      assert.equal((await s.getLatestLeaf())?.id, "b29");
    });
  });

  describe("postgres: connection kinds", () => {
    test("a single pg Client: transactions and concurrent appends do not interleave", async () => {
      await truncateAll(pool, t);
      const client = testClient();
      await client.connect();
      try {
        const s = new PostgresStore(client, options).session("c");
        await Promise.all(Array.from({ length: 20 }, (_, i) => s.appendMessage(msg(`c${i}`))));
        await Promise.all([
          s.deleteMessages(["c3", "c4"]),
          ...Array.from({ length: 10 }, (_, i) => s.appendMessage(msg(`d${i}`))),
          s.updateMessage(msg("c5", "longer text than before")),
        ]);
        assert.equal(await s.getPathLength(), 28);
        await checkTree(pool, t, "c");
      } finally {
        await client.end();
      }
    });

    test("a connection string: the store opens and owns its pool", async () => {
      await truncateAll(pool, t);
      const store = await PostgresStore.open(PG_URL, options);
      await store.session("u").appendMessage(msg("u1", "via url"));
      assert.deepEqual(ids(await store.searchMessages("url")), ["u1"]);
      await store.close();
      await assert.rejects(store.searchMessages("url"), { code: "CLOSED" });
    });
  });

  describe("postgres: reference providers", () => {
    before(() => truncateAll(pool, t));

    test("PostgresSessionProvider(client, sessionId) works on a Pool, a URL and a store", async () => {
      const a = new PostgresSessionProvider(pool, "ref", options);
      await a.appendMessage(msg("r1", "hello"));
      const b = new PostgresSessionProvider(PG_URL, "ref", options);
      await b.appendMessage(msg("r2", "world"));
      const c = new PostgresSessionProvider(await PostgresStore.open(pool, options), "ref");
      assert.deepEqual(ids(await c.getHistory()), ["r1", "r2"]);
      const unnamed = new PostgresSessionProvider(pool, undefined, options);
      assert.equal(unnamed.sessionId, "");
      assert.deepEqual(await unnamed.getHistory(), []);
      assert.throws(() => new PostgresSessionProvider(pool, 5 as never), { code: "INVALID_ARGUMENT" });
    });

    test("PostgresContextProvider: null until set, then the stored text; the label is fixed", async () => {
      const block = new PostgresContextProvider(pool, "memory_x", options);
      assert.equal(await block.get(), null);
      await block.set("");
      assert.equal(await block.get(), "");
      await block.set("remember: tea, no sugar");
      assert.equal(
        await new PostgresContextProvider(PG_URL, "memory_x", options).get(),
        "remember: tea, no sugar",
      );
      assert.equal(await new PostgresContextProvider(pool, "memory_y", options).get(), null);
      assert.equal(block.label, "memory_x");
      assert.throws(() => new PostgresContextProvider(pool, ""), { code: "INVALID_ARGUMENT" });
    });

    test("PostgresSearchProvider: init, count, search format, replace, at most 10 hits", async () => {
      const search = new PostgresSearchProvider(pool, undefined, options);
      await assert.rejects(search.get(), { code: "INVALID_ARGUMENT" });
      search.init("notes");
      assert.equal(await search.get(), null);
      assert.equal(await search.search("anything"), null);
      await search.set("deploy-guide", "How we deploy: build, migrate, release");
      await search.set("tea", "Earl Grey, no sugar");
      assert.equal(await search.get(), "2 entries indexed.");
      assert.equal(
        await search.search("deployment"),
        "[deploy-guide]\nHow we deploy: build, migrate, release",
      );
      assert.equal(
        await search.search("release build"),
        "[deploy-guide]\nHow we deploy: build, migrate, release",
      );
      assert.equal(await search.search("zebra"), null);
      assert.equal(await search.search("   "), null);
      await search.set("tea", "Green tea, honey");
      assert.equal(await search.search("grey"), null);
      assert.equal(await search.search("honey"), "[tea]\nGreen tea, honey");
      for (let i = 0; i < 15; i++) await search.set(`k${i}`, `kiwi fact ${i}`);
      const hits = (await search.search("kiwi"))!.split("\n\n");
      assert.equal(hits.length, 10);
      assert.match(hits[0]!, /^\[k\d+\]\nkiwi fact \d+$/);
      const other = new PostgresSearchProvider(pool, "other", options);
      assert.equal(await other.search("kiwi"), null);
      assert.equal(await other.get(), null);
    });

    test("the store's blocks and entries", async () => {
      const store = await PostgresStore.open(pool, options);
      await store.blocks.setBlock("b1", "one");
      await store.blocks.setBlock("b2", "two");
      await store.blocks.deleteBlocks(["b1", "ghost"]);
      assert.equal(await store.blocks.getBlock("b1"), null);
      assert.equal(await store.blocks.getBlock("b2"), "two");
      await store.entries.setEntry("l", "k", 'Café "au lait" résumé');
      assert.deepEqual(await store.entries.searchEntries("l", "RESUME cafe"), [
        { key: "k", content: 'Café "au lait" résumé' },
      ]);
      assert.deepEqual(await store.entries.searchEntries("l", '"lait au"'), []);
      assert.equal(await store.entries.countEntries("l"), 1);
      await store.entries.deleteEntries("l");
      assert.equal(await store.entries.countEntries("l"), 0);
    });
  });
}
