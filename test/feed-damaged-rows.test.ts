// The change feed: a change-log row that cannot be read is one reset of its session and delivery goes on (SQLite
// and Postgres alike), watching a Postgres store creates no table, and a mirror whose first read fails unsubscribes.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type {
  ChangeEvent,
  ChangeListener,
  FeedCapableStore,
  SubscribeOptions,
} from "../src/contract/feed.js";
import { MemoryStore } from "../src/memory/store.js";
import { PostgresStore } from "../src/postgres/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { mirror } from "../src/store/feed/mirror.js";
import { dropSchema, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";

// Every await before the first test is registered: an await after one lets the earlier tests finish first, and a
// root-level `after` added then runs at once (it ended the pool under the server's tests).
const unavailable = await postgresUnavailable();
const SCHEMA = `agent_session_test_feed_fixes_${process.pid}`;
const pool = unavailable ? undefined : testPool(8);
if (pool) await dropSchema(pool, SCHEMA);

const text = (id: string) => ({ id, role: "user" as const, parts: [{ type: "text" as const, text: id }] });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const brief = (e: ChangeEvent) =>
  e.type === "append" || e.type === "update" ? `${e.type} ${e.message.id}` : `${e.type} ${e.sessionId}`;

/** Subscribes and resolves once the feed has its starting point. */
function subscribed(store: FeedCapableStore, listener: ChangeListener, options: SubscribeOptions = {}) {
  return new Promise<() => void>((resolve) => {
    const stop: () => void = store.subscribe(listener, { ...options, onReady: () => resolve(stop) });
  });
}

/** Waits (up to 10 s) until `events` holds an event that reads `last`, and returns them all. */
async function until(events: ChangeEvent[], last: string): Promise<string[]> {
  const end = Date.now() + 10_000;
  while (!events.some((e) => brief(e) === last) && Date.now() < end) await sleep(10);
  return events.map(brief);
}

/**
 * Waits for `last`, then writes a sentinel message after it and waits for the sentinel's event: a feed that
 * repeats or stalls on a bad row shows it before the sentinel, so nothing is left to a quiet period.
 */
async function settle(
  events: ChangeEvent[],
  last: string,
  writer: SqliteStore | PostgresStore,
  sessionId = "s",
) {
  await until(events, last);
  await writer.session(sessionId).appendMessage(text("sentinel"));
  return until(events, "append sentinel");
}

/**
 * Counts the events handed to every listener subscribed through `store.subscribe` from now on, and returns a
 * sentinel: a listener subscribed after them, resolving on its first event. Subscribers get an event in the order
 * they subscribed (the first call of each listener runs within the write's emit), so once the sentinel has its
 * event, a listener left subscribed before it has been handed that event too.
 */
function deliveries(store: MemoryStore) {
  const subscribe = store.subscribe.bind(store);
  let delivered = 0;
  store.subscribe = (listener, options) =>
    subscribe((event) => {
      delivered++;
      return listener(event);
    }, options);
  const sentinel = async () => {
    let heard!: (event: ChangeEvent) => void;
    const event = new Promise<ChangeEvent>((resolve) => {
      heard = resolve;
    });
    const stop = await subscribed({ subscribe } as FeedCapableStore, (e) => heard(e), { sessionId: "s" });
    return { event, stop };
  };
  return { delivered: () => delivered, sentinel };
}

const dir = mkdtempSync(join(tmpdir(), "agent-session-feed-rows-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("sqlite file: a change-log row that cannot be read", { concurrency: false }, () => {
  /** A writer whose log row for m2 is damaged as it is written (so no poll ever sees it whole). */
  async function damagedLog(name: string) {
    const file = join(dir, `${name}.db`);
    const writer = new SqliteStore(file, { changeLog: true });
    await writer.session("other").appendMessage(text("seed")); // creates agent_changes
    writer.driver.run(`CREATE TRIGGER break_m2 AFTER INSERT ON agent_changes WHEN NEW.ids LIKE '%"m2"%'
      BEGIN UPDATE agent_changes SET ids = '[broken' WHERE seq = NEW.seq; END`);
    return { file, writer };
  }

  test("a live subscriber gets every event once, in order, the bad row as a reset of its session", async () => {
    const { file, writer } = await damagedLog("live");
    const reader = new SqliteStore(file, { changeLog: { pollMs: 10 } });
    const events: ChangeEvent[] = [];
    const stop = await subscribed(reader, (e) => void events.push(e), { sessionId: "s" });
    for (const id of ["m1", "m2", "m3"]) await writer.session("s").appendMessage(text(id));
    assert.deepEqual(await settle(events, "append m3", writer), [
      "append m1",
      "reset s",
      "append m3",
      "append sentinel",
    ]);
    const reset = events[1];
    assert.ok(reset?.type === "reset" && reset.origin === "remote" && typeof reset.cursor === "number");
    assert.match(reset.reason, /could not be read/);
    stop();
    await Promise.all([reader.close(), writer.close()]);
  });

  test("a replay from a cursor does the same and goes on past the bad row", async () => {
    const { file, writer } = await damagedLog("replay");
    for (const id of ["m1", "m2", "m3"]) await writer.session("s").appendMessage(text(id));
    const reader = new SqliteStore(file, { changeLog: true });
    const events: ChangeEvent[] = [];
    const stop = reader.subscribe((e) => void events.push(e), { sessionId: "s", after: 0 });
    assert.deepEqual(await settle(events, "append m3", writer), [
      "append m1",
      "reset s",
      "append m3",
      "append sentinel",
    ]);
    stop();
    await Promise.all([reader.close(), writer.close()]);
  });
});

describe("mirror(): a failed start unsubscribes", () => {
  test("an onChange that throws on the first read rejects mirror() and leaves no subscription", async () => {
    const store = new MemoryStore();
    await store.session("s").appendMessage(text("m1"));
    const counted = deliveries(store);
    const errors: unknown[] = [];
    await assert.rejects(
      mirror(store, "s", {
        onChange: () => {
          throw new Error("boom");
        },
        onError: (error) => void errors.push(error),
      }),
      /boom/,
    );
    assert.equal(store.feed.idle, true, "nobody listens any more");
    const sentinel = await counted.sentinel();
    await store.session("s").appendMessage(text("m2"));
    assert.equal(brief(await sentinel.event), "append m2");
    assert.equal(counted.delivered(), 0, "the failed mirror was handed no event");
    assert.deepEqual(errors, [], "a later write reports nothing");
    sentinel.stop();
    await store.close();
  });

  test("a first read that fails rejects mirror() and leaves no subscription", async () => {
    const store = new MemoryStore();
    const session = store.session.bind(store);
    store.session = (id: string) => {
      const provider = session(id);
      provider.getHistory = async () => {
        throw new Error("read failed");
      };
      return provider;
    };
    const counted = deliveries(store);
    const errors: unknown[] = [];
    await assert.rejects(mirror(store, "s", { onError: (error) => void errors.push(error) }), /read failed/);
    assert.equal(store.feed.idle, true);
    const sentinel = await counted.sentinel();
    await session("s").appendMessage(text("m1"));
    assert.equal(brief(await sentinel.event), "append m1");
    assert.equal(counted.delivered(), 0, "the failed mirror was handed no event");
    assert.deepEqual(errors, []);
    sentinel.stop();
    await store.close();
  });
});

if (!pool) {
  test("postgres feed fixes", { skip: unavailable ?? true }, () => undefined);
} else {
  after(async () => {
    await dropSchema(pool, SCHEMA);
    await pool.end();
  });
  const logTable = async () => {
    const { rows } = await pool.query("SELECT to_regclass($1)::text AS name", [`"${SCHEMA}".agent_changes`]);
    return (rows[0] as { name: string | null }).name;
  };

  describe("postgres: damaged rows and a watcher that writes nothing", { concurrency: false }, () => {
    test("watching creates no change-log table, and follows the writer that creates it", async () => {
      // The store's own tables exist (as for `serve`), the change log does not.
      await (await PostgresStore.open(pool, { schema: SCHEMA })).close();
      const watcher = await PostgresStore.openExisting(pool, { schema: SCHEMA, changeLog: true });
      const events: ChangeEvent[] = [];
      const stop = await subscribed(watcher, (e) => void events.push(e), { sessionId: "w" });
      await sleep(300); // the watcher has polled
      assert.equal(await logTable(), null, "watching created no table");
      const replayed: ChangeEvent[] = [];
      const stopReplay = watcher.subscribe((e) => void replayed.push(e), { after: 0 });
      await sleep(100);
      assert.equal(await logTable(), null, "nor did a replay");
      assert.deepEqual(replayed, []);
      const writer = await PostgresStore.open(pool, { schema: SCHEMA, changeLog: true });
      await writer.session("w").appendMessage(text("w1"));
      await writer.session("w").appendMessage(text("w2"));
      assert.deepEqual(await settle(events, "append w2", writer, "w"), [
        "append w1",
        "append w2",
        "append sentinel",
      ]);
      assert.ok(events.every((e) => e.origin === "remote"));
      stopReplay();
      stop();
      await Promise.all([watcher.close(), writer.close()]);
    });

    test("a row that cannot be read is a reset of its session, as on SQLite, and delivery goes on", async () => {
      const writer = await PostgresStore.open(pool, { schema: SCHEMA, changeLog: true });
      await writer.session("other").appendMessage(text("seed")); // the log table exists
      await pool.query(`CREATE OR REPLACE FUNCTION "${SCHEMA}".break_m2() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.ids LIKE '%"m2"%' THEN NEW.ids := '[broken'; END IF; RETURN NEW; END $$`);
      await pool.query(`CREATE TRIGGER break_m2 BEFORE INSERT ON "${SCHEMA}".agent_changes
        FOR EACH ROW EXECUTE FUNCTION "${SCHEMA}".break_m2()`);
      const reader = await PostgresStore.open(pool, { schema: SCHEMA, changeLog: { pollMs: 10 } });
      const events: ChangeEvent[] = [];
      const stop = await subscribed(reader, (e) => void events.push(e), { sessionId: "s" });
      for (const id of ["m1", "m2", "m3"]) await writer.session("s").appendMessage(text(id));
      assert.deepEqual(await settle(events, "append m3", writer), [
        "append m1",
        "reset s",
        "append m3",
        "append sentinel",
      ]);
      stop();
      await Promise.all([reader.close(), writer.close()]);
    });
  });
}
