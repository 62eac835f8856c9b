// AgentSessionStore (docs/LANGGRAPH.md "Store"): the same scenario on InMemoryStore and ours (SQLite, PGlite,
// Postgres, a Citus cluster), the owner boundary, TTL and its sweep, sealing and erasure on disk, and a StateGraph
// using it. Citus runs where AGENT_SESSION_CITUS_URL (default: CI's port) answers, skipped with the reason printed
// otherwise, and fails under CI=true without it (fixtures/citus-db.ts).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { Annotation, StateGraph } from "@langchain/langgraph";
import { type BaseStore, InMemoryStore } from "@langchain/langgraph-checkpoint";
import { AgentSessionStore } from "../../src/langgraph/index.js";
import { SessionManager } from "../../src/manager/manager.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { citusSchema } from "../fixtures/citus-db.js";
import { newPGlite } from "../fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { occurrences, randomKeyring } from "../helpers/encryption.js";
import { sqliteFiles } from "../helpers/purge.js";

const dir = mkdtempSync(join(tmpdir(), "lgstore-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const strip = (items: readonly { namespace: string[]; key: string; value: unknown; score?: unknown }[]) =>
  items.map(({ namespace, key, value }) => ({ namespace, key, value }));
const byKey = <T extends { namespace: string[]; key: string }>(items: T[]) =>
  [...items].sort((a, b) =>
    `${a.namespace.join(".")}\u0000${a.key}` < `${b.namespace.join(".")}\u0000${b.key}` ? -1 : 1,
  );

// The scenario both stores run; each answer recorded, search results in namespace-then-key order (ours).
async function scenario(store: BaseStore): Promise<unknown[]> {
  const out: unknown[] = [];
  await store.put(["alice", "memories"], "a1", { text: "likes tea", n: 1, tag: "x" });
  await store.put(["alice", "memories"], "a2", { text: "likes coffee", n: 5, tag: "y" });
  await store.put(["alice", "memories", "deep"], "a3", { text: "plays chess", n: 9, tag: "x" });
  await store.put(["alice", "prefs"], "p", { theme: "dark", n: 3 });
  await store.put(["alice2"], "z", { n: 1 });
  await store.put(["bob", "memories"], "b1", { text: "likes tea", n: 2, tag: "x" });
  await store.put(["alice", "memories"], "a2", { text: "likes green coffee", n: 6, tag: "y" });
  out.push(strip([(await store.get(["alice", "memories"], "a2"))!]));
  out.push(await store.get(["alice", "memories"], "nope"));
  const all = async (prefix: string[], options: Parameters<BaseStore["search"]>[1] = {}) =>
    strip(byKey(await store.search(prefix, { ...options, limit: 100 })));
  out.push(await all(["alice"]));
  out.push(await all(["alice", "memories"]));
  out.push(await all(["alice"], { filter: { tag: "x" } }));
  out.push(await all(["alice"], { filter: { n: { $gt: 2, $lte: 9 } } }));
  out.push(await all(["alice"], { filter: { n: { $in: [1, 3] } } }));
  out.push(await all(["alice"], { filter: { tag: { $ne: "x" }, n: { $nin: [3] } } }));
  out.push(await all(["alice"], { filter: { n: { $gte: 6 }, tag: { $eq: "y" } } }));
  out.push(await all(["alice"], { filter: { n: { $lt: 4 } } }));
  const full = await all(["alice"]);
  for (const [offset, limit] of [
    [0, 2],
    [1, 2],
    [3, 10],
    [9, 1],
  ] as const) {
    out.push({ offset, limit, page: full.slice(offset, offset + limit) });
  }
  await store.delete(["alice", "memories"], "a1");
  out.push(await store.get(["alice", "memories"], "a1"));
  out.push(await all(["alice", "memories"]));
  out.push(await store.listNamespaces({ prefix: ["alice"] }));
  out.push(await store.listNamespaces({ prefix: ["alice"], maxDepth: 2 }));
  out.push(await store.listNamespaces({ prefix: ["alice", "*"], suffix: ["deep"] }));
  out.push(await store.listNamespaces({ prefix: ["alice"], limit: 1, offset: 1 }));
  return out;
}

async function paged(store: BaseStore): Promise<unknown[]> {
  // Our own pages: in namespace-then-key order, offset and limit over it.
  const full = strip(await store.search(["alice"], { limit: 100 }));
  const pages = [];
  for (const [offset, limit] of [
    [0, 2],
    [1, 2],
    [3, 10],
    [9, 1],
  ] as const) {
    pages.push({ offset, limit, page: strip(await store.search(["alice"], { offset, limit })) });
  }
  return [full, pages];
}

type Open = {
  name: string;
  skip?: () => Promise<string | null>;
  open(): Promise<{ store: SqliteStore | PostgresStore; close(): Promise<void> }>;
};

const backends: Open[] = [
  {
    name: "SQLite",
    open: async () => {
      const store = new SqliteStore(join(dir, `${Math.random().toString(36).slice(2)}.db`));
      return { store, close: () => store.close() };
    },
  },
  {
    name: "PGlite",
    skip: async () => pgliteSwitchedOff(),
    open: async () => {
      const db = await newPGlite();
      const store = await PostgresStore.open(db, { schema: "lgstore" });
      const close = async () => {
        await store.close();
        await db.close();
      };
      return { store, close };
    },
  },
  {
    name: "Postgres",
    skip: postgresUnavailable,
    open: async () => {
      const pool = testPool(4);
      const schema = `lgstore_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
      const store = await PostgresStore.open(pool, { schema });
      return {
        store,
        close: async () => {
          await store.close();
          await dropSchema(pool, schema);
          await pool.end();
        },
      };
    },
  },
];

// Distributed once for the file (it costs seconds); each case empties it. Awaited before any test is registered.
const cluster = await citusSchema("lgstore");
backends.push({
  name: "Citus",
  skip: async () => (cluster ? null : "no Citus cluster (the reason is printed above)"),
  open: async () => {
    await cluster!.reset();
    // The fixture closes its stores when the file ends.
    return { store: cluster!.store(), close: async () => undefined };
  },
});

for (const backend of backends) {
  describe(`AgentSessionStore on ${backend.name}`, async () => {
    const reason = (await backend.skip?.()) ?? null;
    if (reason) console.log(`# SKIP ${backend.name}: ${reason}`);
    const it = (name: string, body: (store: SqliteStore | PostgresStore) => Promise<void>) =>
      test(name, { skip: reason ?? false }, async () => {
        const { store, close } = await backend.open();
        try {
          await body(store);
        } finally {
          await close();
        }
      });

    it("answers the scenario as InMemoryStore does", async (store) => {
      const ours = new AgentSessionStore(store);
      assert.deepEqual(await scenario(ours), await scenario(new InMemoryStore()));
      const [full, pages] = (await paged(ours)) as [
        unknown[],
        { offset: number; limit: number; page: unknown[] }[],
      ];
      for (const { offset, limit, page } of pages) assert.deepEqual(page, full.slice(offset, offset + limit));
    });

    it("keeps each owner's items to searches of that owner, and refuses a read naming none", async (store) => {
      const ours = new AgentSessionStore(store, { owner: (ns) => ns[1] });
      await ours.put(["memories", "alice"], "k", { text: "alice secret" });
      await ours.put(["memories", "bob"], "k", { text: "bob secret" });
      assert.deepEqual(strip(await ours.search(["memories", "alice"], { query: "secret" })), [
        { namespace: ["memories", "alice"], key: "k", value: { text: "alice secret" } },
      ]);
      await assert.rejects(ours.search(["memories"]), { code: "INVALID_ARGUMENT" });
      await assert.rejects(ours.listNamespaces({ prefix: ["memories"] }), { code: "INVALID_ARGUMENT" });
      await assert.rejects(ours.put(["memories"], "k", { a: 1 }), { code: "INVALID_ARGUMENT" });
      const wide = new AgentSessionStore(store, { owner: (ns) => ns[1], crossOwnerReads: true });
      assert.equal((await wide.search(["memories"])).length, 2);
      await assert.rejects(ours.put(["a.b"], "k", { a: 1 }), { name: "InvalidNamespaceError" });
      await assert.rejects(ours.put(["memories", "alice"], "k", [1] as never), { code: "INVALID_ARGUMENT" });
      await assert.rejects(ours.search(["memories", "alice"], { limit: -1 }), { code: "INVALID_ARGUMENT" });
      assert.throws(() => new AgentSessionStore(store, { maxScan: 0 }), { code: "INVALID_ARGUMENT" });
    });

    it("ranks a text query by its words, every term required", async (store) => {
      const ours = new AgentSessionStore(store);
      await ours.put(["u", "m"], "1", { text: "likes green tea" });
      await ours.put(["u", "m"], "2", { text: "tea tea, and more tea with green leaves" });
      await ours.put(["u", "m"], "3", { text: "coffee" });
      await ours.put(["u", "m"], "4", { text: "tea", other: "green" }, ["other"]);
      await ours.put(["u", "m"], "5", { text: "green tea" }, false);
      const hits = await ours.search(["u"], { query: "green tea" });
      assert.deepEqual(
        hits.map((h) => h.key),
        ["2", "1"],
      );
      assert.ok((hits[0]?.score ?? 0) > (hits[1]?.score ?? 0));
    });

    it("hides an expired item, refreshes on read, and the sweep deletes it", async (store) => {
      const ours = new AgentSessionStore(store, { ttl: { defaultTtl: 1 } });
      await ours.put(["u"], "short", { a: 1 }, undefined, { ttl: 0.0001 });
      await ours.put(["u"], "long", { a: 2 });
      await ours.put(["u"], "never", { a: 3 }, undefined, { ttl: null });
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(await ours.get(["u"], "short"), null);
      assert.deepEqual(
        (await ours.search(["u"])).map((i) => i.key),
        ["long", "never"],
      );
      assert.deepEqual(await ours.listNamespaces({ prefix: ["u"] }), [["u"]]);
      assert.equal(await store.graphItems.count(), 3);
      assert.equal(await ours.sweepExpired(), 1);
      assert.equal(await store.graphItems.count(), 2);
    });
  });
}

test("SQLite: an encrypted owner's values are never in clear on disk; eraseOwner then purge leaves no byte", async () => {
  const path = join(dir, "sealed.db");
  const store = new SqliteStore(path, { keyring: randomKeyring(["alice"]) });
  const ours = new AgentSessionStore(store);
  await ours.put(["alice", "memories"], "m", { text: "zqxalicesecretq likes tea", tag: "x" });
  await ours.put(["bob", "memories"], "m", { text: "zqxbobclearq" });
  assert.deepEqual(
    (await ours.search(["alice"], { filter: { tag: "x" }, query: "tea" })).map((i) => i.value.text),
    ["zqxalicesecretq likes tea"],
  );
  store.driver.run("PRAGMA wal_checkpoint(TRUNCATE)");
  assert.equal(occurrences(sqliteFiles(path), "zqxalicesecretq"), 0, "alice's value sealed");
  assert.ok(occurrences(sqliteFiles(path), "zqxbobclearq") > 0, "bob, without a key, in clear");
  const keyless = new AgentSessionStore(new SqliteStore(path));
  await assert.rejects(keyless.get(["alice", "memories"], "m"), { code: "DECRYPT_FAILED" });
  const receipt = await SessionManager.create(store).eraseOwner("bob");
  assert.equal(receipt.items, 1);
  assert.equal(await ours.get(["bob", "memories"], "m"), null);
  assert.equal((await store.purge()).complete, true);
  await store.close();
  assert.equal(
    occurrences(sqliteFiles(path), "zqxbobclearq"),
    0,
    "no byte of bob's item after eraseOwner + purge",
  );
});

test("a StateGraph compiled with the store writes and reads memories in its nodes", async () => {
  const store = new SqliteStore(join(dir, "graph.db"));
  try {
    const State = Annotation.Root({ user: Annotation<string>(), recalled: Annotation<string[]>() });
    const graph = new StateGraph(State)
      .addNode("remember", async (state, config) => {
        await config.store?.put([state.user, "memories"], `m${Date.now()}`, {
          text: `${state.user} likes tea`,
        });
        return {};
      })
      .addNode("recall", async (state, config) => {
        const found = (await config.store?.search([state.user, "memories"], { query: "tea" })) ?? [];
        return { recalled: found.map((item) => String(item.value.text)) };
      })
      .addEdge("__start__", "remember")
      .addEdge("remember", "recall")
      .addEdge("recall", "__end__")
      .compile({ store: new AgentSessionStore(store) });
    const result = await graph.invoke({ user: "alice", recalled: [] });
    assert.deepEqual(result.recalled, ["alice likes tea"]);
    const other = await graph.invoke({ user: "bob", recalled: [] });
    assert.deepEqual(other.recalled, ["bob likes tea"]);
  } finally {
    await store.close();
  }
});
