// The change feed across processes, as every backend's test runs it: a subscriber here sees a child process's
// writes (test/fixtures/feed-writer.ts) to the same store, and a subscriber that stopped resumes from its cursor.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type {
  ChangeEvent,
  ChangeListener,
  FeedCapableStore,
  SubscribeOptions,
} from "../../src/contract/feed.js";
import type { SessionStore } from "../../src/contract/store.js";
import { runFixture } from "./child.js";

/** A store with a change feed. */
export type Store = SessionStore & FeedCapableStore;

/** Runs the writer fixture (test/fixtures/feed-writer.ts) with `args` in a child process. */
export async function writer(args: string[]): Promise<void> {
  const output = await runFixture(
    fileURLToPath(new URL("../fixtures/feed-writer.ts", import.meta.url)),
    args,
  );
  if (output) process.stdout.write(output);
}

/** Subscribes and resolves once the feed has its starting point (`onReady`): every later write is delivered. */
export function subscribed(
  store: FeedCapableStore,
  listener: ChangeListener,
  options: SubscribeOptions = {},
) {
  return new Promise<() => void>((resolve) => {
    const stop: () => void = store.subscribe(listener, { ...options, onReady: () => resolve(stop) });
  });
}

/** Waits until an event of `events` reads `last` (see brief). */
export async function until(events: ChangeEvent[], last: string, ms = 15_000): Promise<void> {
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
export const settled = (events: ChangeEvent[]) =>
  events.filter((e) => !(e.type === "append" && e.message.id.endsWith("-2"))).map(brief);

/** An event in one line, as the tests compare them. */
export const brief = (e: ChangeEvent) =>
  e.type === "append" || e.type === "update"
    ? `${e.type} ${e.message.id}${e.type === "append" ? ` <${e.parentId}` : ""}`
    : e.type === "delete"
      ? `delete ${e.ids.join(",")}`
      : e.type;

/** The expected events of one writer run: `count` appends in a chain under `parent`, an update, a delete. */
export function expected(prefix: string, count: number, parent: string | null): string[] {
  const out: string[] = [];
  // The last append is left out: see `settled`.
  for (let i = 0; i < count - 1; i++)
    out.push(`append ${prefix}-${i} <${i === 0 ? parent : `${prefix}-${i - 1}`}`);
  return [...out, `update ${prefix}-0`, `delete ${prefix}-${count - 1}`];
}

/** The cross-process tests of the store `open` makes; `args(prefix)` are the writer fixture's arguments. */
export function crossProcess(
  name: string,
  open: () => Promise<Store>,
  args: (prefix: string) => string[],
): void {
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
