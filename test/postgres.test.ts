import assert from "node:assert/strict";
import { after, before, describe, it, test } from "node:test";
import { SessionManager } from "../src/manager/manager.js";
import {
  PostgresContextProvider,
  PostgresSearchProvider,
  PostgresSessionProvider,
  PostgresStore,
} from "../src/postgres/index.js";
import { migrate, POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION } from "../src/postgres/schema.js";
import { openExecutor } from "../src/sql/engines/postgres/client.js";
import { tableNames } from "../src/sql/engines/postgres/tables.js";
import { listSql } from "../src/sql/registry/postgres.js";
import { ids, msg } from "../src/testing/contract/harness.js";
import { runProviderContract } from "../src/testing/index.js";
import {
  backendPid,
  checkTree,
  dropSchema,
  PG_URL,
  postgresUnavailable,
  testClient,
  testPool,
  truncateAll,
  waitUntilBlockedBy,
} from "./fixtures/postgres-db.js";

/** node:test, injected into the contract suite as a user's runner would be. */
const runner = { describe, it };

// Per process, so two runs of the suite at once (two checkouts, one server) never drop each other's tables.
const SCHEMA = `agent_session_test_main_${process.pid}`;
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

  runProviderContract(runner, {
    name: "postgres (pg Pool)",
    create: async (policy) => {
      await truncateAll(pool, t);
      return new PostgresStore(pool, { ...options, ...policy });
    },
    reopen: async (store) => {
      await store.close();
      return PostgresStore.open(pool, options);
    },
  });

  describe("postgres: schema", () => {
    test("migration run concurrently from several connections creates the tables once", async () => {
      const schema = `agent_session_test_migrate_${process.pid}`;
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

  describe("postgres: schema upgrades", () => {
    test("a version-1 database is migrated in place: blocks and entries kept, registry added", async () => {
      const schema = `agent_session_test_upgrade_${process.pid}`;
      const names = tableNames({ schema });
      await dropSchema(pool, schema);
      try {
        const executor = await openExecutor(pool);
        assert.equal(await migrate(executor, names, POSTGRES_MIGRATIONS.slice(0, 1)), 1);
        await pool.query(`INSERT INTO ${names.blocks} (key, content) VALUES ('memory_a', 'written at v1')`);
        const v1 = new PostgresStore(pool, { schema });
        // Opening the store runs the remaining steps; rows written before stay as they were.
        assert.equal(await v1.blocks.getBlock("memory_a"), "written at v1");
        const { rows } = await pool.query(`SELECT version FROM ${names.version}`);
        assert.deepEqual(rows, [{ version: POSTGRES_SCHEMA_VERSION }]);
        await v1.registry.create({ id: "s", name: "after upgrade" });
        assert.deepEqual(ids(await v1.registry.list()), ["s"]);
      } finally {
        await dropSchema(pool, schema);
      }
    });

    test("version 8 limits the pending list of both full-text indexes to 1 MB and merges what it held", async () => {
      const schema = `agent_session_test_upgrade8_${process.pid}`;
      const opts = { schema, tablePrefix: "p_" };
      const names = tableNames(opts);
      const gin = [`${schema}.p_agent_messages_search`, `${schema}.p_agent_search_entries_search`];
      const pendingLimit = async () =>
        (
          await pool.query<{ options: string[] | null }>(
            "SELECT reloptions AS options FROM pg_class WHERE oid = ANY($1::regclass[]) ORDER BY relname",
            [gin],
          )
        ).rows.map((r) => r.options);
      await dropSchema(pool, schema);
      try {
        const store = await PostgresStore.open(pool, opts);
        assert.deepEqual(await pendingLimit(), [
          ["gin_pending_list_limit=1024"],
          ["gin_pending_list_limit=1024"],
        ]);
        // Back to a version-7 database: default pending lists, rows written into them, version 7 recorded.
        for (const index of gin) await pool.query(`ALTER INDEX ${index} RESET (gin_pending_list_limit)`);
        assert.deepEqual(await pendingLimit(), [null, null]);
        await pool.query(`UPDATE ${names.version} SET version = 7`);
        const chat = store.session("old");
        await chat.appendMessage({
          id: "a",
          role: "user",
          parts: [{ type: "text", text: "written before the upgrade" }],
        });
        await store.entries.setEntry("notes", "k", "entry before the upgrade");
        await store.close();
        // Several processes open the old database at once: one upgrades, the others find it current.
        const stores = await Promise.all([1, 2, 3].map(() => PostgresStore.open(pool, opts)));
        const { rows } = await pool.query(`SELECT version FROM ${names.version}`);
        assert.deepEqual(rows, [{ version: POSTGRES_SCHEMA_VERSION }]);
        assert.deepEqual(await pendingLimit(), [
          ["gin_pending_list_limit=1024"],
          ["gin_pending_list_limit=1024"],
        ]);
        // The pending lists were merged by the upgrade: nothing is left to clean.
        for (const index of gin) {
          const { rows: cleaned } = await pool.query("SELECT gin_clean_pending_list($1::regclass) AS n", [
            index,
          ]);
          assert.deepEqual(cleaned, [{ n: "0" }]);
        }
        const upgraded = stores[0]!;
        await upgraded.session("old").appendMessage({
          id: "b",
          role: "user",
          parts: [{ type: "text", text: "written after the upgrade" }],
        });
        const hits = await upgraded.searchMessages("upgrade");
        assert.deepEqual(hits.map((h) => h.id).sort(), ["a", "b"]);
        assert.deepEqual(
          (await upgraded.entries.searchEntries("notes", "upgrade")).map((e) => e.key),
          ["k"],
        );
        await Promise.all(stores.map((s) => s.close()));
      } finally {
        await dropSchema(pool, schema);
      }
    });
  });

  describe("postgres: schema privileges", () => {
    test("a role that owns its schema but may not create schemas can migrate and use it", async () => {
      const role = `agent_session_test_role_${process.pid}`;
      const schema = `agent_session_test_owned_${process.pid}`;
      await dropSchema(pool, schema);
      await pool.query(`DROP ROLE IF EXISTS ${role}`);
      await pool.query(`CREATE ROLE ${role} LOGIN`);
      const client = testClient();
      try {
        // A new role has no CREATE on the database (only its owner and superusers do by default).
        await pool.query(`CREATE SCHEMA ${schema} AUTHORIZATION ${role}`);
        await client.connect();
        await client.query(`SET ROLE ${role}`);
        const store = await PostgresStore.open(client, { schema, tablePrefix: "owned_" });
        await store.registry.create({ id: "s", name: "owned" });
        await store.session("s").appendMessage(msg("m1"));
        assert.deepEqual(ids(await store.session("s").getHistory()), ["m1"]);
      } finally {
        await client.end();
        await dropSchema(pool, schema);
        await pool.query(`DROP ROLE IF EXISTS ${role}`);
      }
    });
  });

  describe("postgres: session registry", () => {
    test("list() is served by the index agent_sessions_recent, without a sort", async () => {
      await truncateAll(pool, t);
      await pool.query(
        `INSERT INTO ${t.sessions} (id, name, created_at, updated_at)
         SELECT 's' || i, 'n', now(), now() - i * interval '1 second' FROM generate_series(1, 5000) i`,
      );
      await pool.query(`ANALYZE ${t.sessions}`);
      const client = testClient();
      await client.connect();
      try {
        // A generic plan (as a prepared statement gets it): the limit is not known when planning.
        await client.query("SET plan_cache_mode = force_generic_plan");
        await client.query({ name: "list_plan", text: listSql(t), values: [20, 0] });
        const { rows } = await client.query(`EXPLAIN EXECUTE list_plan(20, 0)`);
        const plan = rows.map((r: { "QUERY PLAN": string }) => r["QUERY PLAN"]).join("\n");
        assert.match(plan, /Index Scan using agent_sessions_recent/, plan);
        assert.doesNotMatch(plan, /Sort/, plan);
      } finally {
        await client.end();
      }
      const store = new PostgresStore(pool, options);
      assert.deepEqual(ids(await store.registry.list({ limit: 3 })), ["s1", "s2", "s3"]);
      assert.equal(await store.registry.count(), 5000);
    });

    test("concurrent creates of one id: exactly one wins, the rest are CONFLICT", async () => {
      await truncateAll(pool, t);
      const store = new PostgresStore(pool, options);
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) => store.registry.create({ id: "same", name: `n${i}` })),
      );
      assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
      for (const r of results) if (r.status === "rejected") assert.equal(r.reason.code, "CONFLICT");
      assert.equal(await store.registry.count(), 1);
    });

    test("delete waits for an in-flight write to the session and removes what it wrote", async () => {
      // A transaction holding the head lock stands in for an append that has not committed yet: the delete must
      // wait for it and then remove its row too (a delete reading an older snapshot would leave an orphan).
      await truncateAll(pool, t);
      const store = new PostgresStore(pool, options);
      await store.registry.create({ id: "busy", name: "busy" });
      await store.session("busy").appendMessage(msg("b1", "first"));
      await store.blocks.setBlock("memory_busy", "x");
      const writer = testClient();
      await writer.connect();
      try {
        const writerPid = await backendPid(writer);
        await writer.query("BEGIN");
        const [head] = (await writer.query(`SELECT num FROM ${t.heads} WHERE session_id = 'busy' FOR UPDATE`))
          .rows as { num: string }[];
        await writer.query(
          `INSERT INTO ${t.messages} (session_num, id, role, content, created_at, depth, jump_depth, bytes,
             cum_bytes, tokens, cum_tokens) VALUES ($1, 'late', 'user', '{}', now(), 0, 0, 2, 2, 1, 1)`,
          [head!.num],
        );
        const deleting = store.registry.delete("busy", { blockKeys: ["memory_busy"] });
        await waitUntilBlockedBy(pool, writerPid);
        await writer.query("COMMIT");
        assert.equal(await deleting, true);
      } finally {
        await writer.end();
      }
      const left = await pool.query(
        `SELECT (SELECT count(*)::int FROM ${t.messages}) AS messages, (SELECT count(*)::int FROM ${t.heads}) AS heads,
           (SELECT count(*)::int FROM ${t.blocks}) AS blocks, (SELECT count(*)::int FROM ${t.sessions}) AS sessions`,
      );
      assert.deepEqual(left.rows[0], { messages: 0, heads: 0, blocks: 0, sessions: 0 });
    });

    test("appends racing a delete end up either deleted or in a fresh session, never orphaned", async () => {
      await truncateAll(pool, t);
      const store = new PostgresStore(pool, options);
      const s = store.session("race");
      for (let round = 0; round < 5; round++) {
        await store.registry.create({ id: "race", name: "race" });
        await s.appendMessage(msg(`seed${round}`));
        await Promise.all([
          ...Array.from({ length: 12 }, (_, i) => s.appendMessage(msg(`r${round}-${i}`))),
          store.registry.delete("race"),
        ]);
        const { rows } = await pool.query(
          `SELECT count(*)::int AS n FROM ${t.messages} m
           WHERE NOT EXISTS (SELECT 1 FROM ${t.heads} h WHERE h.num = m.session_num)`,
        );
        assert.equal(rows[0].n, 0, "no message outlives its head");
        await checkTree(pool, t, "race");
        await store.registry.delete("race");
      }
    });

    test("SessionManager.create(store) auto-wires blocks and the cached prompt on Postgres", async () => {
      await truncateAll(pool, t);
      const store = await PostgresStore.open(pool, options);
      const manager = SessionManager.create(store)
        .withContext("memory", { description: "Learned facts", maxTokens: 500 })
        .withCachedPrompt();
      const chat = await manager.create("pg chat");
      const session = manager.getSession(chat.id);
      await session.replaceContextBlock("memory", "likes tea");
      await manager.append(chat.id, msg("u1", "hello"));
      const prompt = await session.freezeSystemPrompt();
      assert.match(prompt, /likes tea/);
      assert.equal(await store.blocks.getBlock(`memory_${chat.id}`), "likes tea");
      assert.equal(await store.blocks.getBlock(`_system_prompt_${chat.id}`), prompt);
      assert.equal(await manager.delete(chat.id), true);
      assert.equal(await store.blocks.getBlock(`memory_${chat.id}`), null);
      assert.equal(await store.blocks.getBlock(`_system_prompt_${chat.id}`), null);
    });
  });

  describe("postgres: text Postgres cannot hold", () => {
    test("only text that needs it is stored escaped; blocks, entries and summaries round-trip exactly", async () => {
      await truncateAll(pool, t);
      const store = new PostgresStore(pool, options);
      await store.blocks.setBlock("plain", 'ordinary "text" \\u0000 ☕');
      await store.blocks.setBlock("nul", "a\u0000b");
      await store.blocks.setBlock("surrogate", "half \ud83d of an emoji, and \ude00 the other");
      const { rows } = await pool.query(`SELECT key, content, content_json FROM ${t.blocks} ORDER BY key`);
      assert.deepEqual(rows, [
        { key: "nul", content: '"a\\u0000b"', content_json: true },
        { key: "plain", content: 'ordinary "text" \\u0000 ☕', content_json: false },
        {
          key: "surrogate",
          content: '"half \\ud83d of an emoji, and \\ude00 the other"',
          content_json: true,
        },
      ]);
      assert.equal(await store.blocks.getBlock("nul"), "a\u0000b");
      // A writer that predates the flag overwrites the content and leaves the flag set: read back as stored.
      await pool.query(`UPDATE ${t.blocks} SET content = $1 WHERE key = 'nul'`, ["written by v1"]);
      assert.equal(await store.blocks.getBlock("nul"), "written by v1");
      await pool.query(`UPDATE ${t.blocks} SET content = $1 WHERE key = 'nul'`, ['"quoted, no NUL"']);
      assert.equal(await store.blocks.getBlock("nul"), '"quoted, no NUL"');
      await store.blocks.setBlock("nul", "a\u0000b");
      assert.equal(await store.blocks.getBlock("surrogate"), "half \ud83d of an emoji, and \ude00 the other");
      const session = store.session("nul");
      await session.appendMessage(msg("m1"));
      await session.appendMessage(msg("m2"));
      const summary = "summary\u0000with NUL \ud800";
      const compaction = await session.addCompaction(summary, "m1", "m1");
      assert.equal((await session.getCompactions())[0]?.summary, summary);
      const [overlay] = await session.getHistory();
      assert.equal(overlay?.id, `compaction_${compaction.id}`);
      assert.ok(
        JSON.stringify(overlay).includes(JSON.stringify(summary).slice(1, -1)),
        "the overlay carries it",
      );
      await store.entries.setEntry("kb", "k", "lone \udfff surrogate");
      assert.deepEqual(await store.entries.searchEntries("kb", "surrogate"), [
        { key: "k", content: "lone \udfff surrogate" },
      ]);
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
      // The tip moves to its parent, not to the newest other branch (b29).
      assert.equal((await s.getLatestLeaf())?.id, "m299");
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

    test("a closed shared store is replaced: the next provider on the same URL or Pool works", async () => {
      for (const source of [PG_URL, pool]) {
        const first = new PostgresSessionProvider(source, "reopen", options);
        await first.appendMessage(msg(`o-${typeof source}`, "before close"));
        await first.store.close();
        await assert.rejects(first.getHistory(), { code: "CLOSED" });
        const second = new PostgresSessionProvider(source, "reopen", options);
        assert.notEqual(second.store, first.store);
        assert.equal((await second.getHistory()).at(-1)?.id, `o-${typeof source}`);
      }
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
      assert.equal(await search.search("anything"), "No results found.");
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
      assert.equal(await search.search("zebra"), "No results found.");
      assert.equal(await search.search("   "), null);
      await search.set("tea", "Green tea, honey");
      assert.equal(await search.search("grey"), "No results found.");
      assert.equal(await search.search("honey"), "[tea]\nGreen tea, honey");
      for (let i = 0; i < 15; i++) await search.set(`k${i}`, `kiwi fact ${i}`);
      const hits = (await search.search("kiwi"))!.split("\n\n");
      assert.equal(hits.length, 10);
      assert.match(hits[0]!, /^\[k\d+\]\nkiwi fact \d+$/);
      const other = new PostgresSearchProvider(pool, "other", options);
      assert.equal(await other.search("kiwi"), "No results found.");
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
