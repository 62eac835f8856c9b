// The change log's bounded retention: writers prune it in bounded batches, so it stays around `retain` rows
// whatever the number of writes, and a subscriber resuming from a cursor the log no longer holds is told so with a
// `reset` before the events the log still has.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { ChangeEvent, FeedCapableStore } from "../src/contract/feed.js";
import type { SessionStore } from "../src/contract/store.js";
import { PostgresStore } from "../src/postgres/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { PRUNE_EVERY } from "../src/store/feed/change-rows.js";
import { appendChain } from "../src/testing/contract/harness.js";
import { dropSchema, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";

// Every await before the first test is registered: an await after one lets the earlier tests finish first, and a
// root-level `after` added then runs at once (it ended the pool under the server's tests).
const unavailable = await postgresUnavailable();
const schema = `agent_session_test_retention_${process.pid}`;
const pool = unavailable ? undefined : testPool(2);
if (pool) await dropSchema(pool, schema);

const RETAIN = 20;
// Three pruning rounds: the log would hold 800 rows without them.
const WRITES = 3 * PRUNE_EVERY + 32;

interface Target {
  store: SessionStore & FeedCapableStore;
  /** Rows in the change log now, and the oldest cursor it holds. */
  log(): Promise<{ rows: number; oldest: number }>;
}

/** Resolves once `events` holds an append of `id`. */
async function until(events: ChangeEvent[], id: string): Promise<void> {
  for (let i = 0; i < 1000 && !events.some((e) => e.type === "append" && e.message.id === id); i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
}

function retention(name: string, open: () => Promise<Target>): void {
  describe(`${name}: change-log retention`, () => {
    test("the log stays bounded by retain plus one pruning interval; an old cursor resumes with a reset", async () => {
      const { store, log } = await open();
      await appendChain(store, "r", WRITES);
      const { rows, oldest } = await log();
      assert.ok(rows <= RETAIN + PRUNE_EVERY, `${rows} rows left after ${WRITES} writes`);
      assert.ok(rows >= RETAIN, `pruning keeps the newest ${RETAIN} rows, left ${rows}`);
      assert.ok(oldest > 1, "the oldest rows were pruned");

      // A cursor the log no longer holds: a store-wide reset first, then every event the log still has.
      const old: ChangeEvent[] = [];
      const stopOld = store.subscribe((e) => void old.push(e), { after: 0 });
      await until(old, `m${WRITES - 1}`);
      stopOld();
      const [first, ...rest] = old;
      assert.ok(first?.type === "reset" && first.wholeStore === true, `first event: ${first?.type}`);
      assert.equal(first.cursor, 0);
      assert.equal(rest.length, rows);
      assert.ok(rest.every((e) => e.type === "append" && e.origin === "local"));
      assert.equal(rest[0]?.cursor, oldest);
      assert.equal(rest.at(-1)?.cursor, oldest + rows - 1);

      // A cursor it still holds: no reset, exactly the events after it.
      const recent: ChangeEvent[] = [];
      const from = oldest + rows - 6;
      const stopRecent = store.subscribe((e) => void recent.push(e), { after: from });
      await until(recent, `m${WRITES - 1}`);
      stopRecent();
      assert.deepEqual(
        recent.map((e) => (e.type === "append" ? e.message.id : e.type)),
        Array.from({ length: 5 }, (_, i) => `m${WRITES - 5 + i}`),
      );
      await store.close();
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), "agent-session-retention-"));
after(() => rmSync(dir, { recursive: true, force: true }));
retention("sqlite file", async () => {
  const store = new SqliteStore(join(dir, "retention.db"), { changeLog: { retain: RETAIN } });
  return {
    store,
    log: async () => {
      const row = store.driver.get<{ rows: number; oldest: number }>(
        "SELECT count(*) AS rows, min(seq) AS oldest FROM agent_changes",
      );
      return { rows: Number(row?.rows), oldest: Number(row?.oldest) };
    },
  };
});

if (!pool) {
  console.log(`Skipping the Postgres retention test: ${unavailable}`);
  test("postgres change-log retention", { skip: unavailable ?? true }, () => undefined);
} else {
  after(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });
  retention("postgres", async () => {
    const store = await PostgresStore.open(pool, { schema, changeLog: { retain: RETAIN } });
    return {
      store,
      log: async () => {
        const { rows } = await pool.query<{ rows: string; oldest: string }>(
          `SELECT count(*) AS rows, min(seq) AS oldest FROM "${schema}".agent_changes`,
        );
        return { rows: Number(rows[0]?.rows), oldest: Number(rows[0]?.oldest) };
      },
    };
  });
}
