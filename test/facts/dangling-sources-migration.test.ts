// The one-time cleanup of facts stored before every write checked its sources (SQLite migration 29, Postgres 28;
// sql/facts/dangling.ts): a source naming a message the store does not hold goes, as if the message had been
// deleted, and a fact left without a source goes too, a fact it superseded current again. The dangling sources are
// made by raw SQL, as an older store left them, and the version set back so that the reopen migrates.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { FactStore } from "../../src/contract/facts.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { tempDir } from "../cli/helpers.js";
import { dropSchema, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";

const tmp = tempDir("agent-session-dangling-");
after(() => tmp.remove());
const unavailable = await postgresUnavailable();

const SCOPE = { sessionId: "s" };
type Store = (SqliteStore | PostgresStore) & { facts: FactStore };

const fact = (text: string, ...ids: string[]) => ({
  text,
  observedAt: 1,
  sources: ids.map((messageId) => ({ sessionId: "s", messageId })),
  producer: "function:test",
});

/** Facts on messages m0..m3 of session "s": kept, one of two sources dangling, all dangling, another session's. */
async function fill(store: Store): Promise<void> {
  for (let i = 0; i < 4; i++) {
    await store
      .session("s")
      .appendMessage({ id: `m${i}`, role: "user", parts: [{ type: "text", text: `t${i}` }] });
  }
  const [old] = await store.facts.add(SCOPE, [fact("replaced by the dangling one", "m0")]);
  const added = await store.facts.add(SCOPE, [
    { ...fact("kept", "m0"), id: "kept" },
    { ...fact("half", "m1", "m2"), id: "half" },
    { ...fact("dangling", "m2"), id: "dangling" },
    { ...fact("elsewhere", "m3"), id: "elsewhere" },
  ]);
  assert.equal(added.length, 4);
  assert.ok(await store.facts.supersede(SCOPE, old!.id, "dangling"));
}

async function check(store: Store): Promise<void> {
  const { facts } = await store.facts.list(SCOPE, { status: ["current", "superseded", "invalidated"] });
  const byText = new Map(facts.map((f) => [f.text, f]));
  assert.deepEqual([...byText.keys()].sort(), ["half", "kept", "replaced by the dangling one"]);
  assert.deepEqual(byText.get("half")?.sources, [{ sessionId: "s", messageId: "m1" }]);
  assert.equal(
    byText.get("replaced by the dangling one")?.status,
    "current",
    "the fact it superseded is back",
  );
  // Every source left is a stored message: the export imports again.
  const page = await store.facts.exportPage({ limit: 100 });
  for (const f of page.facts) {
    for (const { sessionId, messageId } of f.sources) {
      assert.notEqual(await store.session(sessionId).getMessage(messageId), null, `${f.text}: ${messageId}`);
    }
  }
}

describe("the migration drops fact sources naming messages not stored, and facts left without one", () => {
  test("SQLite", async () => {
    const path = tmp.path("dangling.db");
    const store = new SqliteStore(path);
    await fill(store as Store);
    // m2 and m3 as an older store could leave them: named by sources, never stored (or in no session).
    store.driver.run("UPDATE agent_fact_sources SET message_id = 'ghost' WHERE message_id = 'm2'");
    store.driver.run("UPDATE agent_fact_sources SET session_id = 'nowhere' WHERE message_id = 'm3'");
    store.driver.run("UPDATE agent_session_schema SET version = 28");
    await store.close();
    const reopened = new SqliteStore(path) as Store;
    try {
      await check(reopened);
    } finally {
      await reopened.close();
    }
  });

  test("Postgres", { skip: unavailable ?? false }, async () => {
    const pool = testPool(2);
    const schema = `dangling_facts_${process.pid}`;
    await dropSchema(pool, schema);
    try {
      const store = (await PostgresStore.open(pool, { schema })) as Store;
      await fill(store);
      await store.close();
      await pool.query(
        `UPDATE "${schema}".agent_fact_sources SET message_id = 'ghost' WHERE message_id = 'm2'`,
      );
      await pool.query(
        `UPDATE "${schema}".agent_fact_sources SET session_id = 'nowhere' WHERE message_id = 'm3'`,
      );
      await pool.query(`UPDATE "${schema}".agent_session_schema SET version = 27`);
      const reopened = (await PostgresStore.open(pool, { schema })) as Store;
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
