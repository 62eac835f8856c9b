// Migration 22 (SQLite and Postgres): rows stored before records existed are given one where the old suffix rule
// cannot be wrong, and stay unrecorded where it could (a suffix that is also an owner's id, two suffixes naming
// sessions, no session at all). The rows are made as a store before step 22 left them: no record, version 21.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { ContextCapableStore, RecordedBlockStore } from "../src/contract/context.js";
import type { RegistryCapableStore } from "../src/contract/registry.js";
import { PostgresStore } from "../src/postgres/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { tempDir } from "./cli/helpers.js";
import { dropSchema, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";

const tmp = tempDir("agent-session-records-");
after(() => tmp.remove());

type Store = RegistryCapableStore & ContextCapableStore;
const unavailable = await postgresUnavailable();

/** Alice's sessions "bob" and "a", Bob's "team_a" (and so owner "bob"), and the rows before records. */
async function fill(store: Store): Promise<void> {
  await store.registry.create({ id: "bob", name: "Alice's chat named bob", owner: "alice" });
  await store.registry.create({ id: "a", name: "a", owner: "alice" });
  await store.registry.create({ id: "team_a", name: "team_a", owner: "bob" });
  await store.registry.create({ id: "s1", name: "s1" });
  for (const [key, content] of Object.entries(ROWS)) await store.blocks.setBlock(key, content);
  await store.entries.setEntry("kb_s1", "k", "an entry filed under s1's key");
}

const ROWS: Record<string, string> = {
  memory_s1: "s1's, by the one suffix naming a session",
  _system_prompt_bob: "the library's own row of session bob",
  _memories_owner_bob: "owner bob's memory directory",
  profile_bob: "bob is both a session and an owner: unrecorded",
  notes_team_a: "a and team_a both name sessions: unrecorded",
  memory_gone: "no session: unrecorded",
};

async function check(store: Store): Promise<void> {
  const blocks = store.blocks as RecordedBlockStore;
  assert.deepEqual(await blocks.recordedKeys({ sessionId: "s1" }), ["memory_s1"]);
  assert.deepEqual(await blocks.recordedKeys({ sessionId: "bob" }), ["_system_prompt_bob"]);
  assert.deepEqual(await blocks.recordedKeys({ owner: "bob" }), ["_memories_owner_bob"]);
  assert.deepEqual(await blocks.recordedKeys({ sessionId: "a" }), []);
  assert.deepEqual(await blocks.recordedKeys({ sessionId: "team_a" }), []);
  for (const [key, content] of Object.entries(ROWS)) assert.equal(await blocks.getBlock(key), content);
  const counts = await store.registry.erase?.("s1");
  assert.equal(counts?.blocks, 1);
  assert.equal(counts?.entries, 1, "the entry filed under s1's block key is s1's");
}

describe("migration 22 gives the rows stored before a record where the suffix rule is unambiguous", () => {
  test("SQLite", async () => {
    const path = tmp.path("old.db");
    const store = new SqliteStore(path);
    await fill(store);
    // Rows as a store before migration 22 left them, through the store's own driver (either SQLite driver).
    store.driver.run("UPDATE agent_context_blocks SET session_id = NULL, owner = NULL");
    store.driver.run("UPDATE agent_search_entries SET session_id = NULL, owner = NULL");
    store.driver.run("UPDATE agent_session_schema SET version = 21");
    await store.close();
    const reopened = new SqliteStore(path);
    try {
      await check(reopened);
    } finally {
      await reopened.close();
    }
  });

  test("Postgres", { skip: unavailable ?? false }, async () => {
    const pool = testPool(2);
    const schema = `records_migrate_${process.pid}`;
    await dropSchema(pool, schema);
    try {
      const store = await PostgresStore.open(pool, { schema });
      await fill(store);
      await store.close();
      await pool.query(`UPDATE "${schema}".agent_context_blocks SET session_id = NULL, owner = NULL`);
      await pool.query(`UPDATE "${schema}".agent_search_entries SET session_id = NULL, owner = NULL`);
      await pool.query(`UPDATE "${schema}".agent_session_schema SET version = 21`);
      const reopened = await PostgresStore.open(pool, { schema });
      try {
        await check(reopened);
      } finally {
        await reopened.close();
      }
    } finally {
      await dropSchema(pool, schema);
      await pool.end();
    }
  });
});
