// The SQLite data-version watermark (writers without a change log) must not take a store's own writes for
// another connection's: they used to explain away another connection's delete elsewhere, which then went
// unannounced while the subscriber was told its own session changed.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { ChangeEvent, ChangeListener, FeedCapableStore } from "../src/contract/feed.js";
import { SqliteStore } from "../src/sqlite/store.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-watermark-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const text = (id: string) => ({ id, role: "user" as const, parts: [{ type: "text" as const, text: id }] });
const brief = (e: ChangeEvent) =>
  e.type === "reset"
    ? `${e.origin} reset ${e.wholeStore ? "*" : e.sessionId}`
    : `${e.origin} ${e.type} ${e.sessionId}`;
const remote = (events: ChangeEvent[]) => events.filter((e) => e.origin === "remote").map(brief);

function subscribed(store: FeedCapableStore, listener: ChangeListener, sessionId?: string) {
  return new Promise<() => void>((resolve) => {
    const options = sessionId === undefined ? {} : { sessionId };
    const stop: () => void = store.subscribe(listener, { ...options, onReady: () => resolve(stop) });
  });
}

/** Waits (bounded) until `events` holds a remote event; the watcher delivers all of one poll's resets at once. */
async function remoteArrived(events: ChangeEvent[]): Promise<void> {
  const end = Date.now() + 10_000;
  while (!events.some((e) => e.origin === "remote") && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("sqlite watermark: this store's own writes", { concurrency: false }, () => {
  for (const changeLog of [false, true]) {
    for (const pause of [0, 600]) {
      test(`another connection's delete elsewhere is announced, not the own session (log ${changeLog}, own write ${pause} ms before)`, async () => {
        const file = join(dir, `own-${changeLog}-${pause}.db`);
        const other = new SqliteStore(file);
        await other.session("b").appendMessage(text("b1"));
        await other.session("b").appendMessage(text("b2"));
        const store = new SqliteStore(file, changeLog ? { changeLog: true } : {});
        const all: ChangeEvent[] = [];
        const mine: ChangeEvent[] = [];
        const stops = [
          await subscribed(store, (e) => void all.push(e)),
          await subscribed(store, (e) => void mine.push(e), "a"),
        ];
        await store.session("a").appendMessage(text("a1"));
        // With a pause the own write is seen by a poll of its own first; without, in the delete's poll.
        if (pause > 0) await new Promise((r) => setTimeout(r, pause));
        await other.session("b").deleteMessages(["b2"]);
        await remoteArrived(all);
        assert.deepEqual(remote(all), ["remote reset *"], "the delete elsewhere is a store-wide reset");
        assert.deepEqual(remote(mine), ["remote reset *"], "the own session gets no reset of its own");

        // The own write taken into the snapshot does not blind it: another connection's append there is heard.
        all.length = 0;
        mine.length = 0;
        await other.session("a").appendMessage(text("a2"));
        await remoteArrived(mine);
        assert.deepEqual(remote(mine), ["remote reset a"]);
        for (const stop of stops) stop();
        await Promise.all([store.close(), other.close()]);
      });
    }
  }
});
