import assert from "node:assert/strict";
import { type ChangeEvent, hasFeed } from "../../contract/feed.js";
import { hasSessionRegistry } from "../../contract/registry.js";
import type { SessionStore } from "../../contract/store.js";
import { Session } from "../../session/session.js";
import { mirror } from "../../store/feed/mirror.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, withStore } from "./harness.js";

/** Resolves once `events` holds `n` events (listeners are called asynchronously after the write). */
async function until(events: unknown[], n: number): Promise<void> {
  for (let i = 0; i < 400 && events.length < n; i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(events.length >= n, `expected ${n} events, got ${events.length}`);
}

/** A compact view of an event for assertions. */
function brief(event: ChangeEvent): string {
  switch (event.type) {
    case "append":
      return `append ${event.sessionId}/${event.message.id} ${event.inserted}`;
    case "update":
      return `update ${event.sessionId}/${event.message.id} ${JSON.stringify(event.message.parts)}`;
    case "import":
      return `import ${event.sessionId}/${event.message.id}`;
    case "delete":
      return `delete ${event.sessionId}/${event.ids.join(",")}`;
    case "compaction":
      return `compaction ${event.sessionId}/${event.compaction.fromMessageId}-${event.compaction.toMessageId}`;
    default:
      return `${event.type} ${event.sessionId}`;
  }
}

function feedStore(store: SessionStore) {
  if (!hasFeed(store)) throw new Error(`${store.backend} has no subscribe()`);
  return store;
}

/** The change feed: ordered events after every durable write, on every backend. */
export function feedSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("change feed", () => {
    test("every write kind is delivered once, in commit order, with the stored message", () =>
      withStore(target, async (store) => {
        const events: ChangeEvent[] = [];
        const stop = feedStore(store).subscribe((e) => {
          events.push(e);
        });
        const a = store.session("a");
        await a.appendMessage(msg("m1"));
        await a.appendMessage(msg("m1", "other")); // duplicate id: inserted false, first content
        await a.appendMessage(msg("compaction_echo")); // an echoed overlay: ignored, nothing to tell
        await a.appendMessage(msg("m2"), "m1");
        await a.updateMessage(msg("m2", "edited"));
        await a.updateMessage(msg("m2", "edited")); // identical: nothing written, no event
        // An echoed overlay: nothing stored, no event (append and upsert, provider and Session).
        const echo = msg("compaction_1", "a summary the client posted back", "assistant");
        await a.appendMessage(echo);
        await a.upsertMessage?.(echo);
        await new Session(store, { sessionId: "a" }).appendMessage(echo);
        await new Session(store, { sessionId: "a" }).upsertMessage(echo);
        await a.upsertMessage?.(msg("m3"));
        await a.importMessage?.(msg("m4"), { parentId: "m3" });
        await a.addCompaction("summary", "m1", "m2");
        await a.deleteMessages(["m4"]);
        await store.session("b").appendMessage(msg("x"));
        await a.clearMessages();
        const expected = [
          "append a/m1 true",
          "append a/m1 false",
          "append a/m2 true",
          'update a/m2 [{"type":"text","text":"edited"}]',
          ...(a.upsertMessage ? ["append a/m3 true"] : []),
          ...(a.importMessage ? ["import a/m4"] : []),
          "compaction a/m1-m2",
          "delete a/m4",
          "append b/x true",
          "clear a",
        ];
        await until(events, expected.length);
        assert.deepEqual(events.map(brief), expected);
        const text = (e: ChangeEvent | undefined) =>
          e && "message" in e ? (e.message.parts[0] as { text: string }).text : undefined;
        assert.equal(text(events[0]), "text of m1");
        assert.equal(text(events[1]), "text of m1", "a duplicate append carries the first content");
        assert.ok(events.every((e) => e.origin === "local"));
        stop();
        await a.appendMessage(msg("late"));
        await new Promise((r) => setTimeout(r, 20));
        assert.equal(events.length, expected.length, "no events after unsubscribe");
      }));

    test("a throwing or rejecting listener never fails the write; onError receives it; order is kept", () =>
      withStore(target, async (store) => {
        const errors: string[] = [];
        const seen: string[] = [];
        const controller = new AbortController();
        feedStore(store).subscribe(
          async (e) => {
            if (e.type !== "append") return;
            await new Promise((r) => setTimeout(r, e.message.id === "m0" ? 20 : 0));
            seen.push(e.message.id);
            if (e.message.id === "m1") throw new Error("listener broke");
            if (e.message.id === "m2") return Promise.reject(new Error("listener rejected"));
          },
          { onError: (error) => errors.push((error as Error).message), signal: controller.signal },
        );
        const a = store.session("s");
        for (let i = 0; i < 4; i++) {
          const result = await a.appendMessage(msg(`m${i}`));
          assert.equal(result?.inserted, true);
        }
        await until(seen, 4);
        assert.deepEqual(seen, ["m0", "m1", "m2", "m3"], "a slow listener still sees events in order");
        assert.deepEqual(errors, ["listener broke", "listener rejected"]);
        assert.deepEqual(ids(await a.getHistory()), ["m0", "m1", "m2", "m3"]);
        controller.abort();
        await a.appendMessage(msg("m4"));
        await new Promise((r) => setTimeout(r, 20));
        assert.equal(seen.length, 4, "aborting the signal unsubscribes");
      }));

    test("Session.subscribe sees only its own session", () =>
      withStore(target, async (store) => {
        const session = Session.create(store).forSession("mine");
        const events: ChangeEvent[] = [];
        const stop = await session.subscribe((e) => {
          events.push(e);
        });
        await store.session("other").appendMessage(msg("o1"));
        await session.appendMessage(msg("s1"));
        await store.session("mine").appendMessage(msg("s2"));
        await until(events, 2);
        assert.deepEqual(events.map(brief), ["append mine/s1 true", "append mine/s2 true"]);
        stop();
        await session.close();
      }));

    test("mirror() keeps one session's active path in step", () =>
      withStore(target, async (store) => {
        const a = store.session("m");
        await a.appendMessage(msg("r"));
        const view = await mirror(store, "m");
        const settled = async (expected: string[]) => {
          for (let i = 0; i < 200 && ids(view.messages).join() !== expected.join(); i++) {
            await new Promise((r) => setTimeout(r, 5));
          }
          assert.deepEqual(ids(view.messages), expected);
        };
        await settled(["r"]);
        await a.appendMessage(msg("u1"));
        await a.appendMessage(msg("a1"));
        await settled(["r", "u1", "a1"]);
        await a.updateMessage(msg("u1", "changed"));
        await settled(["r", "u1", "a1"]);
        assert.deepEqual(view.messages[1]?.parts, [{ type: "text", text: "changed" }]);
        await a.appendMessage(msg("b1"), "r"); // a branch: the active path moves to it
        await settled(["r", "b1"]);
        await a.deleteMessages(["b1"], { tip: "ancestor" }); // the deleted tip gives way to its parent
        await settled(["r"]);
        await a.appendMessage(msg("a2"), "a1"); // back on the first branch
        await settled(["r", "u1", "a1", "a2"]);
        await a.addCompaction("sum", "r", "u1");
        await settled([`compaction_${(await a.getCompactions())[0]?.id}`, "a1", "a2"]);
        await a.clearMessages();
        await settled([]);
        view.close();
      }));

    test("onReady is called once, after subscribe() returned, and every write after it is delivered", () =>
      withStore(target, async (store) => {
        const feed = feedStore(store);
        assert.throws(
          () => feed.subscribe(() => undefined, { onReady: "soon" as never }),
          (error: unknown) => (error as { code?: string }).code === "INVALID_ARGUMENT",
        );
        const events: ChangeEvent[] = [];
        let returned = false;
        let calls = 0;
        let stop: (() => void) | undefined;
        await new Promise<void>((resolve) => {
          stop = feed.subscribe((e) => void events.push(e), {
            sessionId: "r",
            onReady: () => {
              calls++;
              assert.ok(returned, "not before subscribe() returned");
              resolve();
            },
          });
          returned = true;
        });
        await store.session("r").appendMessage(msg("r1"));
        await until(events, 1);
        assert.deepEqual(events.map(brief), ["append r/r1 true"]);
        // A second subscriber joins the running feed and is told too.
        await new Promise<void>((resolve) => feed.subscribe(() => undefined, { onReady: resolve })());
        assert.equal(calls, 1);
        stop?.();
      }));

    test("a registry delete is a clear of that session", (t) =>
      withStore(target, async (store) => {
        if (!hasSessionRegistry(store)) return t.skip("no registry");
        const events: ChangeEvent[] = [];
        feedStore(store).subscribe((e) => {
          events.push(e);
        });
        await store.registry.create({ id: "gone", name: "Gone" });
        await store.session("gone").appendMessage(msg("g1"));
        await store.registry.delete("gone");
        await until(events, 2);
        assert.deepEqual(events.map(brief), ["append gone/g1 true", "clear gone"]);
      }));
  });
}
