// An agent storage's list() while other sessions are written: every session saved before it began comes exactly
// once. list() used to page the registry by activity with offsets; a session saved meanwhile moves up that order,
// so the next page repeated one session and skipped another.
import assert from "node:assert/strict";
import { test } from "node:test";
import { StoreSessionStorage } from "../../src/agent/index.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import { MemoryStore } from "../../src/memory/store.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { sampleState } from "../../src/testing/storage/fixtures.js";

// More than a page of the registry (500), so the list spans pages.
const SESSIONS = 1_100;

/** A small state: the registry's order, not the content, is what list() reads. */
const state = (id: string) => sampleState({ id, messages: [] });

/**
 * Runs `write` before every read of the registry (each `list()` call, and every 100th row a `scan()` yields): the
 * writes another process would make while the pages are read.
 */
function writesBetweenReads(store: RegistryCapableStore, write: () => Promise<void>): void {
  const registry = store.registry;
  const list = registry.list.bind(registry);
  const scan = registry.scan.bind(registry);
  registry.list = async (options) => {
    await write();
    return list(options);
  };
  registry.scan = async function* (options) {
    let rows = 0;
    for await (const info of scan(options)) {
      if (rows++ % 100 === 0) await write();
      yield info;
    }
  };
}

for (const [name, open] of [
  ["memory", () => new MemoryStore()],
  ["SQLite", () => new SqliteStore(":memory:")],
] as const) {
  test(`${name}: list() while other sessions are saved names each earlier session once`, async () => {
    const store = open();
    const storage = new StoreSessionStorage(store);
    try {
      const before = Array.from({ length: SESSIONS }, (_, i) => `s${String(i).padStart(4, "0")}`);
      for (const id of before) await storage.save(state(id));
      let writes = 0;
      // Saves the session last in activity order (it moves first) and creates a new one.
      writesBetweenReads(store, async () => {
        await storage.save(state(before[writes]!));
        await storage.save(state(`new${writes++}`));
      });
      const listed = await storage.list();
      assert.ok(writes >= 2, "the writes ran between reads");
      assert.equal(new Set(listed).size, listed.length, "no session twice");
      assert.deepEqual(
        before.filter((id) => !listed.includes(id)),
        [],
        "every session saved before list() began",
      );
    } finally {
      await store.close();
    }
  });
}

// A store shared with conversations: what list() reads must not grow with them.
const CONVERSATIONS = 600;

for (const [name, open] of [
  ["memory", () => new MemoryStore()],
  ["SQLite", () => new SqliteStore(":memory:")],
] as const) {
  test(`${name}: list() reads the agent sessions' registry rows only, none of the conversations'`, async () => {
    const store = open();
    const storage = new StoreSessionStorage(store);
    try {
      // Conversations without a source (as SessionManager registers them) and of another source, around the ids
      // of the agent sessions.
      for (let i = 0; i < CONVERSATIONS; i++) {
        await store.registry.create({
          id: `chat${i}`,
          name: "chat",
          ...(i % 3 === 0 ? { source: "web" } : {}),
        });
      }
      const agents = ["agent-b", "agent-a", "chat2x", "zeta"];
      for (const id of agents) await storage.save(state(id));
      const scan = store.registry.scan.bind(store.registry);
      let yielded = 0;
      store.registry.scan = async function* (options) {
        for await (const info of scan(options)) {
          yielded++;
          yield info;
        }
      };
      // On SQLite, also the rows its statements hand back (a registry could read them all and filter after).
      let returned = 0;
      if (store instanceof SqliteStore) {
        const all = store.driver.all.bind(store.driver);
        store.driver.all = <T>(sql: string, params?: Parameters<typeof all>[1]) => {
          const rows = all<T>(sql, params);
          returned += rows.length;
          return rows;
        };
      }
      assert.deepEqual([...(await storage.list())].sort(), [...agents].sort());
      assert.equal(yielded, agents.length, "the registry yielded the agent sessions only");
      if (store instanceof SqliteStore)
        assert.equal(returned, agents.length, "SQLite returned their rows only");
    } finally {
      await store.close();
    }
  });
}

test("a store whose registry has no scan() is refused with INVALID_ARGUMENT, not a TypeError in list()", async () => {
  const store = new MemoryStore();
  try {
    // A registry written against the interface before scan() existed (plain JavaScript).
    (store.registry as { scan?: unknown }).scan = undefined;
    const storage = new StoreSessionStorage(store);
    await assert.rejects(storage.list(), { code: "INVALID_ARGUMENT" });
  } finally {
    await store.close();
  }
});
