import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { MemoryPathBackend } from "../src/memory/history-stream.js";
import { MemoryStore } from "../src/memory/store.js";
import { PostgresPathBackend } from "../src/postgres/history-stream.js";
import { PostgresStore } from "../src/postgres/store.js";
import { SqlitePathBackend } from "../src/sqlite/history-stream.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { type PathBackend, walkHistory } from "../src/store/history-stream.js";
import { recentHistory } from "../src/store/recent.js";
import { appendChain } from "../src/testing/contract/harness.js";
import { citusSchema } from "./fixtures/citus-db.js";
import { dropSchema, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";

/** Wraps a backend and counts the rows whose content each read returned. */
function counting<K>(backend: PathBackend<K>): { backend: PathBackend<K>; contents: () => number } {
  let contents = 0;
  const wrapped: PathBackend<K> = {
    leaf: (id) => backend.leaf(id),
    plan: (leaf) => backend.plan(leaf),
    ancestor: (node, depth) => backend.ancestor(node, depth),
    hydrate: (messages) => backend.hydrate(messages),
    read: async (bottom, limits) => {
      const rows = await backend.read(bottom, limits);
      contents += rows.filter((r) => r.json !== null).length;
      return rows;
    },
  };
  return { backend: wrapped, contents: () => contents };
}

const backends: Record<string, () => Promise<() => PathBackend<unknown>>> = {
  memory: async () => {
    const store = new MemoryStore();
    await appendChain(store, "a", 1000);
    return () => new MemoryPathBackend(store, store.sessionData("a", false)) as PathBackend<unknown>;
  },
  sqlite: async () => {
    const store = new SqliteStore(":memory:");
    await appendChain(store, "a", 1000);
    return () => new SqlitePathBackend(store.driver, "a", () => true) as PathBackend<unknown>;
  },
};

const pgUnavailable = await postgresUnavailable();
if (pgUnavailable) console.log(`Skipping the Postgres rows: ${pgUnavailable}`);
else {
  const schema = `agent_session_test_reads_${process.pid}`;
  const pool = testPool();
  let opened: Promise<PostgresStore> | undefined;
  after(async () => {
    await (await opened)?.close();
    await dropSchema(pool, schema);
    await pool.end();
  });
  backends.postgres = async () => {
    opened ??= (async () => {
      await dropSchema(pool, schema);
      const store = await PostgresStore.open(pool, { schema });
      await appendChain(store, "a", 1000);
      return store;
    })();
    const store = await opened;
    const executor = await store.ready();
    return () => new PostgresPathBackend(executor, store.tables, "a") as PathBackend<unknown>;
  };
}

// The cluster too: a distributed store's reads name the session, routed to its shard.
const cluster = await citusSchema("reads");
if (cluster) {
  let opened: Promise<PostgresStore> | undefined;
  backends.citus = async () => {
    opened ??= (async () => {
      const store = cluster.store();
      await appendChain(store, "a", 1000);
      return store;
    })();
    const store = await opened;
    const executor = await store.ready();
    return () => new PostgresPathBackend(executor, store.tables, "a") as PathBackend<unknown>;
  };
}

describe("streaming reads load no more than they return", () => {
  for (const [name, make] of Object.entries(backends)) {
    test(`${name}: a newest-first consumer that stops after one batch read one window`, async () => {
      const open = await make();
      const { backend, contents } = counting(open());
      const yielded: string[][] = [];
      for await (const batch of walkHistory(backend, { newestFirst: true, batchSize: 10 })) {
        yielded.push(batch.map((m) => m.id));
        break;
      }
      // The walk must yield that batch (a walk that yields nothing reads nothing, and would pass the bound).
      assert.deepEqual(yielded, [Array.from({ length: 10 }, (_, i) => `m${999 - i}`)]);
      assert.ok(contents() >= 10 && contents() <= 20, `read ${contents()} rows for a batch of 10`);
    });

    test(`${name}: an oldest-first walk reads every row once`, async () => {
      const open = await make();
      const { backend, contents } = counting(open());
      let n = 0;
      for await (const batch of walkHistory(backend, { batchSize: 64, maxBatchBytes: 2000 }))
        n += batch.length;
      assert.equal(n, 1000);
      assert.equal(contents(), 1000);
    });

    test(`${name}: the recent window reads only what fits`, async () => {
      const open = await make();
      const { backend, contents } = counting(open());
      const result = await recentHistory(backend, undefined, 500, undefined, async () => []);
      assert.ok(result.messages.length > 0 && result.messages.length < 20);
      assert.equal(contents(), result.messages.length);
    });
  }
});
