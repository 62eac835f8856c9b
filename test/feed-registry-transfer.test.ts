// The change feed of the writes outside a session's provider (issue 33): a registry delete is one `clear` of the
// session when it removed a head or a registry row (nothing otherwise), and a transfer import that inserted is one
// `reset` of the session (nothing when it inserted nothing). With a change log each is recorded once, by the
// write's own transaction: the live event's cursor is the row's, and a replay holds no second row.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { ChangeEvent } from "../src/contract/feed.js";
import type { TransferItem } from "../src/contract/transfer.js";
import { MemoryStore } from "../src/memory/store.js";
import { PostgresStore } from "../src/postgres/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { citusSchema } from "./fixtures/citus-db.js";
import { dropSchema, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";

// Every await before the first test is registered: an await after one lets the earlier tests finish first, and a
// root-level `after` added then runs at once (it ended the pool under the server's tests).
const unavailable = await postgresUnavailable();

// The cluster's schema first, before any test is registered: a root-level `after` added once the earlier tests
// have finished would run at once and drop it under the cluster's tests.
const cluster = await citusSchema("feed_registry");

type Store = MemoryStore | SqliteStore | PostgresStore;

const text = (id: string) => ({ id, role: "user" as const, parts: [{ type: "text" as const, text: id }] });
const brief = (e: ChangeEvent) =>
  e.type === "append" ? `append ${e.sessionId}/${e.message.id}` : `${e.type} ${e.sessionId}`;

/** Subscribes to the whole store; `done(id)` waits for the append of the marker message `id` (in session "marker"). */
async function listen(store: Store) {
  const events: ChangeEvent[] = [];
  await new Promise<void>((resolve) => store.subscribe((e) => void events.push(e), { onReady: resolve }));
  const done = async (id: string) => {
    await store.session("marker").appendMessage(text(id));
    for (let i = 0; i < 500 && !events.some((e) => brief(e) === `append marker/${id}`); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    return events.map(brief);
  };
  return { events, done };
}

/** A session stream of `messages` (a chain from the first) and `compactions` (over the first message). */
async function* stream(
  sessionId: string,
  messages: string[],
  compactions: string[] = [],
): AsyncGenerator<TransferItem> {
  yield { kind: "session", session: { id: sessionId, info: null, leafId: messages.at(-1) ?? null } };
  const createdAt = new Date().toISOString();
  for (const [i, id] of messages.entries()) {
    const content = JSON.stringify(text(id));
    yield {
      kind: "message",
      message: { id, parentId: messages[i - 1] ?? null, role: "user", createdAt, content },
    };
  }
  for (const id of compactions) {
    yield {
      kind: "compaction",
      compaction: { id, summary: "summary", fromMessageId: "m1", toMessageId: "m1", createdAt },
    };
  }
}

/**
 * With a change log: the replay from the start holds each live clear and reset once, at the live event's cursor
 * (a replayed append whose message is gone since is left out, so appends are not compared).
 */
async function assertLoggedOnce(store: Store, live: ChangeEvent[]): Promise<void> {
  if (live.every((e) => e.cursor === null)) return; // no change log (memory)
  const replayed: ChangeEvent[] = [];
  const stop = store.subscribe((e) => void replayed.push(e), { after: 0 });
  const marker = live.at(-1)?.cursor;
  for (let i = 0; i < 500 && !replayed.some((e) => e.cursor === marker); i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  stop();
  const key = (e: ChangeEvent) => (e.type === "append" ? [] : [`${e.type} ${e.sessionId} @${e.cursor}`]);
  assert.deepEqual(replayed.flatMap(key), live.flatMap(key));
}

function feedOf(name: string, open: () => Promise<Store>) {
  describe(`${name}: registry deletes and transfer imports`, { concurrency: false }, () => {
    test("a registry delete is a clear when it removed a head or a row, and nothing otherwise", async (t) => {
      const store = await open();
      t.after(() => store.close()); // also when an assertion failed: a listening store keeps the process alive
      const { events, done } = await listen(store);
      await store.registry.create({ id: "gone", name: "Gone" });
      await store.session("gone").appendMessage(text("g1"));
      assert.equal(await store.registry.delete("gone"), true);
      assert.equal(await store.registry.delete("gone"), false, "a second delete finds nothing");
      assert.equal(await store.registry.delete("never"), false);
      await store.registry.create({ id: "empty", name: "Registered only" });
      assert.equal(await store.registry.delete("empty"), true);
      await store.session("orphan").appendMessage(text("o1"));
      assert.equal(await store.registry.delete("orphan"), false, "no registry row, but its messages went");
      assert.deepEqual(await done("d"), [
        "append gone/g1",
        "clear gone",
        "clear empty",
        "append orphan/o1",
        "clear orphan",
        "append marker/d",
      ]);
      await assertLoggedOnce(store, events);
    });

    test("a transfer import that inserted is one reset; one that inserted nothing is silent", async (t) => {
      const store = await open();
      t.after(() => store.close()); // also when an assertion failed: a listening store keeps the process alive
      const { events, done } = await listen(store);
      const first = await store.transfer.importSession(stream("t", ["m1", "m2"], ["c1"]));
      assert.deepEqual([first.messages.inserted, first.compactions.inserted], [2, 1]);
      const again = await store.transfer.importSession(stream("t", ["m1", "m2"], ["c1"]));
      assert.deepEqual([again.messages.inserted, again.compactions.inserted], [0, 0]);
      // Only an overlay is new: no leaf to set, still one reset.
      await store.transfer.importSession(stream("t", ["m1"], ["c2"]));
      assert.equal((await store.session("t").getLatestLeaf())?.id, "m2", "the leaf set by the first import");
      assert.deepEqual(await done("i"), ["reset t", "reset t", "append marker/i"]);
      const reset = events[0];
      assert.ok(
        reset?.type === "reset" && reset.reason === 'session "t" was imported' && reset.origin === "local",
      );
      await assertLoggedOnce(store, events);
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), "feed-registry-transfer-"));
after(() => rmSync(dir, { recursive: true, force: true }));
feedOf("memory", async () => new MemoryStore());
let files = 0;
feedOf("sqlite", async () => new SqliteStore(join(dir, `${++files}.db`), { changeLog: true }));

if (unavailable) {
  test("postgres: registry deletes and transfer imports", { skip: unavailable }, () => undefined);
} else {
  const pool = testPool(4);
  const schema = "feed_registry_transfer_test";
  after(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });
  feedOf("postgres", async () => {
    await dropSchema(pool, schema);
    return PostgresStore.open(pool, { schema, changeLog: true });
  });
}

// The cluster: one distributed schema, emptied (change log included) for each case.
if (cluster) {
  feedOf("citus", async () => {
    await cluster.reset();
    return cluster.store({ changeLog: true });
  });
}
