// The change feed across processes: a subscriber here sees a child process's writes to the same SQLite file or
// Postgres schema, and a subscriber that stopped resumes from its cursor without losing an event.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it, test } from "node:test";
import type { ChangeEvent } from "../src/contract/feed.js";
import { PostgresStore } from "../src/postgres/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { feedSpec } from "../src/testing/contract/feed.spec.js";
import { suiteOf } from "../src/testing/runner.js";
import { dropSchema, PG_URL, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";
import { crossProcess, subscribed, writer } from "./helpers/feed-cross-process.js";

// Every await before the first test is registered: an await after one lets the earlier tests finish first, and a
// root-level `after` added then runs at once (it ended the pool under the server's tests).
const unavailable = await postgresUnavailable();
const SCHEMA = `agent_session_test_feed_${process.pid}`;
const pool = unavailable ? undefined : testPool(6);
if (pool) await dropSchema(pool, SCHEMA);

/** node:test, injected into the contract suite as a user's runner would be. */
const runner = { describe, it };

const dir = mkdtempSync(join(tmpdir(), "agent-session-feed-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, "feed.db");
crossProcess(
  "sqlite file",
  async () => new SqliteStore(file, { changeLog: { pollMs: 50 } }),
  (prefix) => ["sqlite", file, "", "x", prefix, "3"],
);
describe("sqlite file: writers without a change log", { concurrency: false }, () => {
  const plain = join(dir, "plain.db");
  const run = (prefix: string) => writer(["sqlite", plain, "", "p", prefix, "3", "plain"]);
  const resets = (events: ChangeEvent[]) => events.filter((e) => e.type === "reset");

  for (const changeLog of [false, true]) {
    test(`a subscriber ${changeLog ? "with" : "without"} a change log sees a reset of the session`, async () => {
      await run("seed"); // the file and the session exist
      const store = new SqliteStore(plain, changeLog ? { changeLog: true } : {});
      const mine: ChangeEvent[] = [];
      const other: ChangeEvent[] = [];
      const all: ChangeEvent[] = [];
      const stops = await Promise.all([
        subscribed(store, (e) => void mine.push(e), { sessionId: "p" }),
        subscribed(store, (e) => void other.push(e), { sessionId: "elsewhere" }),
        subscribed(store, (e) => void all.push(e)),
      ]);
      await run(changeLog ? "q" : "r");
      const exited = Date.now();
      const end = exited + 5_000;
      while ((resets(mine).length === 0 || resets(all).length === 0) && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 10));
      }
      const seen = Date.now() - exited;
      assert.ok(resets(mine).length > 0, "the session's subscriber saw a reset");
      assert.ok(
        mine.every(
          (e) => e.type === "reset" && e.sessionId === "p" && e.origin === "remote" && e.cursor === null,
        ),
      );
      assert.ok(
        all.some((e) => e.type === "reset" && e.sessionId === "p"),
        "a store-wide subscriber gets the session's reset (its appends are new message rows)",
      );
      assert.deepEqual(other, [], "another session's subscriber hears nothing");
      // Informational: the writer's last commit is before its exit, so this bounds the delay from above.
      console.log(
        `plain writer: reset ${seen} ms after the writer exited (subscriber changeLog: ${changeLog})`,
      );
      // At most one reset per poll: never more than the writer's six commits (three appends, an update, a delete,
      // and the search index's batch on close), fewer when one poll sees several.
      assert.ok(resets(mine).length <= 6, `${resets(mine).length} resets`);
      for (const stop of stops) stop();
      await store.close();
    });
  }

  test("a session first named while the watch runs is followed from subscribe(), not from the next poll", async () => {
    await run("t");
    const store = new SqliteStore(plain);
    const writer = new SqliteStore(plain);
    const first = await subscribed(store, () => undefined, { sessionId: "p" });
    const later: ChangeEvent[] = [];
    // The watch is running: this subscription joins it, and the write comes long before its next poll.
    const stop = store.subscribe((e) => void later.push(e), { sessionId: "fresh" });
    await writer
      .session("fresh")
      .appendMessage({ id: "f1", role: "user", parts: [{ type: "text", text: "hi" }] });
    const end = Date.now() + 5_000;
    while (later.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(
      later.map((e) => `${e.type} ${e.sessionId}`),
      ["reset fresh"],
    );
    stop();
    first();
    await Promise.all([writer.close(), store.close()]);
  });

  test("watching with a change log creates no table until something is written", async () => {
    await run("s");
    const store = new SqliteStore(plain, { changeLog: true });
    const stop = store.subscribe(() => undefined);
    await new Promise((r) => setTimeout(r, 250));
    const tables = store.driver.all<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE name = 'agent_changes'",
    );
    assert.deepEqual(tables, []);
    stop();
    await store.close();
  });
});

// The contract's feed spec with a change log on: local events carry cursors, nothing else changes.
feedSpec(suiteOf(runner), {
  name: "sqlite file with change log",
  create: async (policy) =>
    new SqliteStore(join(dir, `spec-${Math.random()}.db`), { ...policy, changeLog: true }),
});

if (!pool) {
  console.log(`Skipping the Postgres feed tests: ${unavailable}`);
  test("postgres feed", { skip: unavailable ?? true }, () => undefined);
} else {
  after(async () => {
    await dropSchema(pool, SCHEMA);
    // The feed spec's own schema (made fresh for each of its tests), which was left on the server after every run.
    await dropSchema(pool, `${SCHEMA}_spec`);
    await pool.end();
  });
  crossProcess(
    "postgres",
    async () => PostgresStore.open(pool, { schema: SCHEMA, changeLog: true }),
    (prefix) => ["postgres", PG_URL, SCHEMA, "x", prefix, "3"],
  );
  feedSpec(suiteOf(runner), {
    name: "postgres with change log",
    create: async (policy) => {
      const schema = `${SCHEMA}_spec`;
      await dropSchema(pool, schema);
      return PostgresStore.open(pool, { ...policy, schema, changeLog: true });
    },
  });
}
