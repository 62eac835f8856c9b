// The change feed across processes: a subscriber here sees a child process's writes to the same SQLite file or
// Postgres schema, and a subscriber that stopped resumes from its cursor without losing an event.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it, test } from "node:test";
import { fileURLToPath } from "node:url";
import type {
  ChangeEvent,
  ChangeListener,
  FeedCapableStore,
  SubscribeOptions,
} from "../src/contract/feed.js";
import type { SessionStore } from "../src/contract/store.js";
import { PostgresStore } from "../src/postgres/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { feedSpec } from "../src/testing/contract/feed.spec.js";
import { suiteOf } from "../src/testing/runner.js";
import { dropSchema, PG_URL, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";
import { runFixture } from "./helpers/child.js";

/** node:test, injected into the contract suite as a user's runner would be. */
const runner = { describe, it };

type Store = SessionStore & FeedCapableStore;

async function writer(args: string[]): Promise<void> {
  const output = await runFixture(fileURLToPath(new URL("./fixtures/feed-writer.ts", import.meta.url)), args);
  if (output) process.stdout.write(output);
}

/** Subscribes and resolves once the feed has its starting point (`onReady`): every later write is delivered. */
function subscribed(store: FeedCapableStore, listener: ChangeListener, options: SubscribeOptions = {}) {
  return new Promise<() => void>((resolve) => {
    const stop: () => void = store.subscribe(listener, { ...options, onReady: () => resolve(stop) });
  });
}

/** Waits until an event of `events` reads `last` (see brief). */
async function until(events: ChangeEvent[], last: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!events.some((e) => brief(e) === last) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.ok(
    events.some((e) => brief(e) === last),
    `no "${last}" among ${events.map(brief).join("; ")}`,
  );
}

// A remote append is delivered with the message read back by id: when the writer deleted it before the
// subscriber read the row, the append is skipped (the delete follows). Each writer run deletes its last message.
const settled = (events: ChangeEvent[]) =>
  events.filter((e) => !(e.type === "append" && e.message.id.endsWith("-2"))).map(brief);

const brief = (e: ChangeEvent) =>
  e.type === "append" || e.type === "update"
    ? `${e.type} ${e.message.id}${e.type === "append" ? ` <${e.parentId}` : ""}`
    : e.type === "delete"
      ? `delete ${e.ids.join(",")}`
      : e.type;

/** The expected events of one writer run: `count` appends in a chain under `parent`, an update, a delete. */
function expected(prefix: string, count: number, parent: string | null): string[] {
  const out: string[] = [];
  // The last append is left out: see `settled`.
  for (let i = 0; i < count - 1; i++)
    out.push(`append ${prefix}-${i} <${i === 0 ? parent : `${prefix}-${i - 1}`}`);
  return [...out, `update ${prefix}-0`, `delete ${prefix}-${count - 1}`];
}

function crossProcess(name: string, open: () => Promise<Store>, args: (prefix: string) => string[]): void {
  describe(`${name}: change feed across processes`, { concurrency: false }, () => {
    test("a subscriber sees another process's writes, with messages and parents, soon after", async () => {
      const store = await open();
      const events: ChangeEvent[] = [];
      const seenAt: number[] = [];
      const stop = await subscribed(
        store,
        (e) => {
          events.push(e);
          seenAt.push(Date.now());
        },
        { sessionId: "x" },
      );
      const started = Date.now();
      await writer(args("a"));
      const exited = Date.now();
      await until(events, "delete a-2");
      assert.deepEqual(settled(events), expected("a", 3, null));
      assert.ok(events.every((e) => e.origin === "remote" && typeof e.cursor === "number"));
      const update = events.find((e) => e.type === "update");
      assert.deepEqual(update?.type === "update" && update.message.parts, [{ type: "text", text: "edited" }]);
      // Informational (the machine is shared): how long after the writer exited the last event arrived.
      console.log(
        `${name}: last remote event ${(seenAt.at(-1) ?? 0) - exited} ms after the writer exited (run ${exited - started} ms)`,
      );
      stop();
      await store.close();
    });

    test("every kind crosses: an append that inserted nothing, an import, a compaction, a clear", async () => {
      const store = await open();
      const events: ChangeEvent[] = [];
      const stop = await subscribed(
        store,
        (e) => {
          events.push(e);
        },
        { sessionId: "k" },
      );
      await writer([...args("k").slice(0, 3), "k", "k", "3", "kinds"]);
      await until(events, "compaction");
      const kinds = events.filter((e) => !(e.type === "append" && e.message.id === "k-2"));
      assert.deepEqual(kinds.map(brief).slice(-3), ["append k-0 <null", "import", "compaction"]);
      const [again, imported, compaction] = kinds.slice(-3);
      assert.ok(again?.type === "append" && again.inserted === false, "a stored id is not inserted again");
      assert.deepEqual(again.message.parts, [{ type: "text", text: "edited" }], "it carries the stored form");
      assert.ok(kinds.slice(0, 2).every((e) => e.type === "append" && e.inserted));
      assert.ok(imported?.type === "import" && imported.inserted);
      assert.equal(imported.message.id, "k-imported");
      assert.ok(compaction?.type === "compaction");
      assert.deepEqual(
        [
          compaction.compaction.summary,
          compaction.compaction.fromMessageId,
          compaction.compaction.toMessageId,
        ],
        ["the first two", "k-0", "k-1"],
      );
      assert.equal(compaction.compaction.id, (await store.session("k").getCompactions())[0]?.id);
      await writer([...args("k").slice(0, 3), "k", "k", "3", "clear"]);
      await until(events, "clear");
      assert.ok(events.every((e) => e.origin === "remote"));
      stop();
      await store.close();
    });

    test("a subscriber that stopped resumes from its cursor: every event once, then live ones", async () => {
      let store = await open();
      const first: ChangeEvent[] = [];
      const stop = await subscribed(
        store,
        (e) => {
          first.push(e);
        },
        { sessionId: "x" },
      );
      await writer(args("b"));
      await until(first, "delete b-2");
      const cursor = first[1]?.cursor; // processed two events, then "crashed"
      assert.equal(typeof cursor, "number");
      stop();
      await store.close();
      await writer(args("c")); // written while nobody listens
      store = await open();
      const resumed: ChangeEvent[] = [];
      store.subscribe(
        (e) => {
          resumed.push(e);
        },
        { sessionId: "x", after: cursor as number },
      );
      await until(resumed, "delete c-2");
      await store.session("x").appendMessage({ id: "live", role: "user", parts: [] });
      await until(resumed, "append live <undefined");
      // The replay holds b-2's append too, but its message is gone (deleted): skipped, the delete says why.
      const b = expected("b", 3, "a-1").slice(2);
      assert.deepEqual(settled(resumed), [...b, ...expected("c", 3, "b-1"), "append live <undefined"]);
      assert.deepEqual(
        resumed.map((e) => e.origin),
        [...Array(resumed.length - 1).fill("remote"), "local"],
      );
      const cursors = resumed.map((e) => e.cursor as number);
      assert.deepEqual(
        cursors,
        [...cursors].sort((x, y) => x - y),
        "cursor order is commit order",
      );
      await store.close();
    });
  });
}

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

const unavailable = await postgresUnavailable();
if (unavailable) {
  console.log(`Skipping the Postgres feed tests: ${unavailable}`);
  test("postgres feed", { skip: unavailable }, () => undefined);
} else {
  const SCHEMA = `agent_session_test_feed_${process.pid}`;
  const pool = testPool(6);
  await dropSchema(pool, SCHEMA);
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
